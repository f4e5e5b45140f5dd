<?php
/**
 * Uninstall: keeps every invoice table, number, payment and invoice post
 * unless the site owner opted in to deletion (Settings → Invoice numbers, or
 * the COUNTERFOIL_DELETE_DATA_ON_UNINSTALL constant). The number format and
 * the series settings stay with the data: a re-installed plugin renders new
 * numbers as before. Always, whatever the owner chose: the daily job is
 * unscheduled, and the credentials (our webhook's signing secret, Stripe's
 * signing secret) and the notices kept as transients are deleted, so that no
 * secret outlives the plugin that used it; a re-installed plugin makes a new
 * webhook secret, and Stripe's is entered again. With deletion, every option
 * of ours goes.
 *
 * @package Counterfoil
 */

defined( 'WP_UNINSTALL_PLUGIN' ) || exit;

if ( ! function_exists( 'counterfoil_uninstall_site' ) ) :
/**
 * Uninstalls from the current site, by its own owner's choice.
 */
function counterfoil_uninstall_site() {
	global $wpdb;

	$counterfoil_delete = ( defined( 'COUNTERFOIL_DELETE_DATA_ON_UNINSTALL' ) && COUNTERFOIL_DELETE_DATA_ON_UNINSTALL )
		|| 1 === (int) get_option( 'counterfoil_delete_data_on_uninstall', 0 );

	wp_clear_scheduled_hook( 'counterfoil_prepare_next_year' );
	delete_option( 'counterfoil_delete_data_on_uninstall' );
	foreach ( array( 'counterfoil_webhook_secret', 'counterfoil_stripe_secret', 'counterfoil_stripe_test_secret' ) as $counterfoil_secret ) {
		delete_option( $counterfoil_secret );
	}
	$wpdb->query( $wpdb->prepare( "DELETE FROM {$wpdb->options} WHERE option_name LIKE %s OR option_name LIKE %s", $wpdb->esc_like( '_transient_counterfoil_' ) . '%', $wpdb->esc_like( '_transient_timeout_counterfoil_' ) . '%' ) ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- every transient of ours, whatever its name (notices per user, log marks): no API lists them.

	if ( ! $counterfoil_delete ) {
		// The format, the series settings and the schema version stay with
		// the data they belong to.
		return;
	}

	// The owner asked for deletion of what is ours, and only that: our invoice
	// posts (by our meta: another plugin's `invoice` posts stay), our tables (a
	// sequences table that was there before us — the article's, adopted — stays).
	$counterfoil_posts = $wpdb->get_col( // phpcs:ignore WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- our posts of three types by our meta, once, at uninstall.
		$wpdb->prepare(
			"SELECT p.ID FROM {$wpdb->posts} p JOIN {$wpdb->postmeta} m ON m.post_id = p.ID AND m.meta_key = '_counterfoil_scope_key' WHERE p.post_type IN (%s, %s, %s)",
			'counterfoil_invoice',
			'counterfoil_cnote',
			'invoice'
		)
	);
	foreach ( $counterfoil_posts as $counterfoil_post_id ) {
		wp_delete_post( (int) $counterfoil_post_id, true );
	}
	// The schema's one list of tables (the plugin is not loaded at uninstall).
	if ( ! class_exists( 'Counterfoil_Autoloader' ) ) {
		require_once __DIR__ . '/includes/class-counterfoil-autoloader.php';
	}
	Counterfoil_Autoloader::register();
	foreach ( Counterfoil_Schema::droppable( $wpdb->prefix, 1 === (int) get_option( 'counterfoil_sequences_preexisting', 1 ) ) as $counterfoil_table ) {
		$wpdb->query( "DROP TABLE IF EXISTS `{$counterfoil_table}`" ); // phpcs:ignore WordPress.DB -- the schema's own names.
	}
	foreach ( array( 'administrator', 'editor', 'author', 'contributor', 'shop_manager' ) as $counterfoil_role_name ) {
		$counterfoil_role = get_role( $counterfoil_role_name );
		if ( $counterfoil_role ) {
			foreach ( array( 'edit_counterfoil_invoices', 'edit_others_counterfoil_invoices', 'edit_published_counterfoil_invoices', 'read_private_counterfoil_invoices' ) as $counterfoil_cap ) {
				$counterfoil_role->remove_cap( $counterfoil_cap );
			}
		}
	}
	// Every option of ours (the format, the series settings, Stripe's
	// account and issuer, the chain's checkpoint, the site's identity, …).
	$counterfoil_options = $wpdb->get_col( $wpdb->prepare( "SELECT option_name FROM {$wpdb->options} WHERE option_name LIKE %s", $wpdb->esc_like( 'counterfoil_' ) . '%' ) ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- every option of ours, whatever its name: no API lists them.
	foreach ( $counterfoil_options as $counterfoil_option ) {
		delete_option( $counterfoil_option );
	}
}
endif;

if ( is_multisite() ) {
	// Each site of the network decides for itself.
	foreach ( get_sites(
		array(
			'fields' => 'ids',
			'number' => 0,
		)
	) as $counterfoil_site_id ) {
		switch_to_blog( $counterfoil_site_id );
		counterfoil_uninstall_site();
		restore_current_blog();
	}
} else {
	counterfoil_uninstall_site();
}
