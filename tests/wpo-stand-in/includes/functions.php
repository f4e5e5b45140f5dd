<?php
/**
 * STAND-IN of WP Overnight's global functions (its wpo-ips-functions.php):
 * the document getter, the attachment file, the log and the number format.
 *
 * @package Counterfoil\Tests
 */

// phpcs:disable -- test code: a stand-in, not shipped.

defined( 'ABSPATH' ) || exit;

/** As the plugin's: trashed orders out, then `wpo_wcpdf_process_order_ids`. */
function wcpdf_filter_order_ids( $order_ids, $document_type ) {
	$order_ids = apply_filters( 'wpo_wcpdf_process_order_ids', $order_ids, $document_type );
	foreach ( $order_ids as $key => $order_id ) {
		$order = wc_get_order( $order_id );
		if ( ! empty( $order ) && is_callable( array( $order, 'get_status' ) ) && 'trash' === $order->get_status() ) {
			unset( $order_ids[ $key ] );
		}
	}
	return array_values( array_unique( $order_ids ) );
}

/**
 * As the plugin's wcpdf_get_document() for one order (an object, an id or
 * an array of one id; bulk documents are not here): the document, unless
 * is_allowed() says no; made (init() then save()) when $init and it does
 * not exist; then the `wcpdf_get_document` filter.
 *
 * @return object|false
 */
function wcpdf_get_document( string $document_type, $order, bool $init = false ) {
	if ( empty( $order ) ) {
		$document = WPO_WCPDF()->documents->get_document( $document_type, $order );
		return apply_filters( 'wcpdf_get_document', $document, $document_type, $order, $init );
	}
	if ( ! is_object( $order ) && ! is_array( $order ) && is_numeric( $order ) ) {
		$order = array( absint( $order ) );
	}
	if ( is_array( $order ) ) {
		$order_ids = wcpdf_filter_order_ids( $order, $document_type );
		if ( 1 !== count( $order_ids ) ) {
			return apply_filters( 'wcpdf_get_document', false, $document_type, $order, $init );
		}
		$order = wc_get_order( $order_ids[0] );
	}
	if ( ! is_object( $order ) ) {
		return apply_filters( 'wcpdf_get_document', false, $document_type, $order, $init );
	}
	do_action( 'wpo_wcpdf_process_template_order', $document_type, $order->get_id() );
	$document = WPO_WCPDF()->documents->get_document( $document_type, $order );
	if ( ! $document || ! is_callable( array( $document, 'is_allowed' ) ) || ! $document->is_allowed() ) {
		return apply_filters( 'wcpdf_get_document', false, $document_type, $order, $init );
	}
	if ( $init && ! $document->exists() ) {
		$document->init();
		$document->save();
	}
	return apply_filters( 'wcpdf_get_document', $document, $document_type, $order, $init );
}

/** As the plugin's: the document's file in its attachments folder (pdf only here). */
function wcpdf_get_document_file( object $document, string $output_format = 'pdf', string $error_handling = 'exception' ) {
	if ( ! in_array( $output_format, $document->output_formats, true ) || ! $document->is_enabled( $output_format ) ) {
		throw new \Exception( "The {$output_format} output format is not enabled for this document." );
	}
	$tmp_path  = WPO_WCPDF()->main->get_tmp_path( 'attachments' );
	$function  = "get_document_{$output_format}_attachment";
	$file_path = WPO_WCPDF()->main->$function( $document, $tmp_path );
	return apply_filters( 'wpo_wcpdf_get_document_file', $file_path, $document, $output_format );
}

/**
 * As the plugin's log (WooCommerce's logger there): here error_log() and
 * the option `cf_wpo_stand_in_log` (the last 50), which tests read.
 */
function wcpdf_log_error( string $message, string $level = 'error', ?\Throwable $e = null, string $source = 'wpo-wcpdf' ): void {
	if ( $e instanceof \Throwable ) {
		$message = sprintf( '%s (%s:%d)', $message, $e->getFile(), $e->getLine() );
	}
	error_log( "[{$source}] {$level}: {$message}" );
	$log   = get_option( 'cf_wpo_stand_in_log', array() );
	$log   = is_array( $log ) ? $log : array();
	$log[] = "{$level}: {$message}";
	update_option( 'cf_wpo_stand_in_log', array_slice( $log, -50 ), false );
}

/**
 * As the plugin's: prefix and suffix (with [order_year], [{slug}_year] …
 * placeholders), then the plain number padded with zeros.
 */
function wpo_wcpdf_format_document_number( ?int $plain_number, ?string $prefix, ?string $suffix, ?int $padding, \WPO\IPS\Documents\OrderDocument $document, \WC_Abstract_Order $order ): string {
	$order_date    = is_callable( array( $order, 'get_date_created' ) ) && $order->get_date_created() ? $order->get_date_created() : new \DateTime( 'now', wp_timezone() );
	$document_date = $document->get_date() ? $document->get_date() : $order_date;
	$values        = array(
		'order_year'              => wp_date( 'Y', $order_date->getTimestamp() ),
		'order_month'             => wp_date( 'm', $order_date->getTimestamp() ),
		'order_day'               => wp_date( 'd', $order_date->getTimestamp() ),
		'order_number'            => is_callable( array( $order, 'get_order_number' ) ) ? $order->get_order_number() : '',
		"{$document->slug}_year"  => wp_date( 'Y', $document_date->getTimestamp() ),
		"{$document->slug}_month" => wp_date( 'm', $document_date->getTimestamp() ),
		"{$document->slug}_day"   => wp_date( 'd', $document_date->getTimestamp() ),
	);
	$formats = array(
		'prefix' => (string) $prefix,
		'suffix' => (string) $suffix,
	);
	foreach ( $formats as $key => $value ) {
		foreach ( $values as $placeholder => $replacement ) {
			$value = str_replace( "[{$placeholder}]", $replacement, $value );
		}
		$formats[ $key ] = $value;
	}
	if ( ! empty( $padding ) ) {
		$plain_number = sprintf( '%0' . intval( $padding ) . 'd', $plain_number );
	}
	return $formats['prefix'] . $plain_number . $formats['suffix'];
}
