<?php
/**
 * Uninstall: keeps every invoice table, number, payment and invoice post
 * unless the site owner opted in to deletion (Settings → Invoice numbers, or
 * the COUNTERFOIL_DELETE_DATA_ON_UNINSTALL constant). Options that hold no
 * invoice data are always removed.
 *
 * @package Counterfoil
 */

defined( 'WP_UNINSTALL_PLUGIN' ) || exit;

global $wpdb;

$counterfoil_delete = ( defined( 'COUNTERFOIL_DELETE_DATA_ON_UNINSTALL' ) && COUNTERFOIL_DELETE_DATA_ON_UNINSTALL )
	|| 1 === (int) get_option( 'counterfoil_delete_data_on_uninstall', 0 );

// Settings without invoice data.
delete_option( 'counterfoil_format' );
delete_option( 'counterfoil_delete_data_on_uninstall' );

if ( ! $counterfoil_delete ) {
	// The secret and schema version stay with the data they belong to.
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
delete_option( 'counterfoil_webhook_secret' );
delete_option( 'counterfoil_schema_version' );
