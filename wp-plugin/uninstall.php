<?php
/**
 * Uninstall: keeps every invoice table, number, payment and invoice post
 * unless the site owner opted in to deletion (Settings → Invoice numbers, or
 * the COUNTERFOIL_DELETE_DATA_ON_UNINSTALL constant). The number format and
 * the series settings stay with the data: a re-installed plugin renders new
 * numbers as before. The daily job is always unscheduled.
 *
 * @package Counterfoil
 */

defined( 'WP_UNINSTALL_PLUGIN' ) || exit;

global $wpdb;

$counterfoil_delete = ( defined( 'COUNTERFOIL_DELETE_DATA_ON_UNINSTALL' ) && COUNTERFOIL_DELETE_DATA_ON_UNINSTALL )
	|| 1 === (int) get_option( 'counterfoil_delete_data_on_uninstall', 0 );

wp_clear_scheduled_hook( 'counterfoil_prepare_next_year' );
delete_option( 'counterfoil_delete_data_on_uninstall' );

if ( ! $counterfoil_delete ) {
	// The format, the series settings, the secret and the schema version stay
	// with the data they belong to.
	return;
}

// The owner asked for deletion: invoice posts, then the tables, then the rest.
$counterfoil_posts = $wpdb->get_col( $wpdb->prepare( "SELECT ID FROM {$wpdb->posts} WHERE post_type = %s", 'invoice' ) );
foreach ( $counterfoil_posts as $counterfoil_post_id ) {
	wp_delete_post( (int) $counterfoil_post_id, true );
}
foreach ( array( 'counterfoil_payments', 'counterfoil_numbers', 'invoice_sequences' ) as $counterfoil_table ) {
	$wpdb->query( "DROP TABLE IF EXISTS `{$wpdb->prefix}{$counterfoil_table}`" ); // phpcs:ignore WordPress.DB -- fixed names.
}
foreach ( array( 'counterfoil_webhook_secret', 'counterfoil_schema_version', 'counterfoil_format', 'counterfoil_missing_series', 'counterfoil_new_series_start', 'counterfoil_next_year_prepared' ) as $counterfoil_option ) {
	delete_option( $counterfoil_option );
}
