<?php
/**
 * The orders list's bulk actions, on both order storages (the posts list
 * `edit-shop_order` and HPOS's `woocommerce_page_wc-orders`): *Number the
 * invoices now* and *Download the invoices (zip)*.
 *
 * Invariants: only a user who may manage the shop (`manage_woocommerce`)
 * acts, after WordPress's or WooCommerce's own bulk nonce (checked before
 * either list hands the action over); numbering goes through
 * Counterfoil_WooCommerce::number_order() on request (the shop picked these
 * orders: numbered whatever their status, payment or age, once — an order
 * with a number keeps it, WP Overnight's included) and through nothing
 * else; the zip holds only the selected orders' own documents
 * (Counterfoil_WooCommerce_Documents::belongs_to()), made in memory and
 * never written to disk, with an `index.csv` naming every order selected
 * and what it has or why it has nothing; at most MAX_ORDERS orders a
 * request.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/** The orders list's bulk actions. */
final class Counterfoil_WooCommerce_Bulk {

	/** The action that numbers the selected orders. */
	const NUMBER = 'counterfoil_number_now';

	/** The action that downloads the selected orders' documents. */
	const DOWNLOAD = 'counterfoil_download_documents';

	/** The most orders one request takes (a page of the list is at most 999). */
	const MAX_ORDERS = 500;

	/** The list screens: posts storage, HPOS. */
	const SCREENS = array( 'edit-shop_order', 'woocommerce_page_wc-orders' );

	/** Hooks. */
	public static function init() {
		foreach ( self::SCREENS as $screen ) {
			add_filter( 'bulk_actions-' . $screen, array( __CLASS__, 'actions' ), 20 );
			add_filter( 'handle_bulk_actions-' . $screen, array( __CLASS__, 'handle' ), 10, 3 );
		}
		add_action( 'admin_notices', array( __CLASS__, 'notice' ) );
	}

	/**
	 * The list's bulk actions, with ours for those who manage the shop.
	 *
	 * @param array $actions Action => label.
	 * @return array
	 */
	public static function actions( $actions ) {
		if ( ! current_user_can( 'manage_woocommerce' ) ) {
			return $actions;
		}
		$actions[ self::NUMBER ]   = __( 'Number the invoices now', 'counterfoil' );
		$actions[ self::DOWNLOAD ] = __( 'Download the invoices (zip)', 'counterfoil' );
		return $actions;
	}

	/**
	 * Runs one of our actions (the list checked its nonce before): numbers
	 * and sends back to the list with the counts, or sends the zip.
	 *
	 * @param string $redirect_to The list's address.
	 * @param string $action      The action.
	 * @param int[]  $ids         The selected orders.
	 * @return string
	 */
	public static function handle( $redirect_to, $action, $ids ) {
		if ( ! in_array( $action, array( self::NUMBER, self::DOWNLOAD ), true ) ) {
			return $redirect_to;
		}
		if ( ! current_user_can( 'manage_woocommerce' ) ) {
			wp_die( esc_html__( 'You are not allowed to do this.', 'counterfoil' ), '', array( 'response' => 403 ) );
		}
		$ids = array_slice( array_values( array_unique( array_filter( array_map( 'absint', (array) $ids ) ) ) ), 0, self::MAX_ORDERS );
		sort( $ids );
		if ( self::DOWNLOAD === $action ) {
			self::send_zip( $ids );
		}
		$counts = self::number( $ids );
		return add_query_arg(
			array(
				'counterfoil_numbered' => $counts['numbered'],
				'counterfoil_had'      => $counts['had'],
				'counterfoil_failed'   => $counts['failed'],
			),
			remove_query_arg( array( 'counterfoil_numbered', 'counterfoil_had', 'counterfoil_failed' ), $redirect_to )
		);
	}

	/**
	 * Numbers the orders on request.
	 *
	 * @param int[] $ids Orders.
	 * @return array numbered (new numbers), had (numbered before), failed.
	 */
	public static function number( array $ids ) {
		$counts = array(
			'numbered' => 0,
			'had'      => 0,
			'failed'   => 0,
		);
		foreach ( $ids as $id ) {
			$order = wc_get_order( $id );
			if ( ! $order || 'shop_order' !== $order->get_type() ) {
				continue;
			}
			$result = Counterfoil_WooCommerce::number_order( $order, true );
			if ( is_array( $result ) ) {
				$counts[ empty( $result['created'] ) ? 'had' : 'numbered' ] += 1;
			} else {
				++$counts['failed'];
			}
		}
		return $counts;
	}

	/**
	 * The zip of the orders' documents: each invoice and credit note as a
	 * PDF (its UBL where PDFs cannot be made here), and `index.csv`.
	 *
	 * @param int[] $ids Orders.
	 * @return string The archive's bytes.
	 */
	public static function zip( array $ids ) {
		$zip   = new Counterfoil_Zip();
		$pdf   = Counterfoil_Documents::pdf_available();
		$rows  = array( array( 'order', 'order_number', 'document', 'number', 'file', 'note' ) );
		$add   = function ( $order, $kind, $post ) use ( $zip, $pdf, &$rows ) {
			$number = (string) get_the_title( $post );
			$format = $pdf ? 'pdf' : 'ubl';
			$bytes  = Counterfoil_Documents::document( $post, $format );
			if ( is_wp_error( $bytes ) ) {
				$rows[] = array( $order->get_id(), $order->get_order_number(), $kind, $number, '', $bytes->get_error_message() );
				return;
			}
			$file   = $zip->add( sanitize_file_name( $number ) . ( $pdf ? '.pdf' : '-ubl.xml' ), $bytes );
			$rows[] = array( $order->get_id(), $order->get_order_number(), $kind, $number, $file, $pdf ? '' : Counterfoil_Documents::pdf_unavailable_message() );
		};
		foreach ( $ids as $id ) {
			$order = wc_get_order( $id );
			if ( ! $order || 'shop_order' !== $order->get_type() ) {
				continue;
			}
			$post = (int) $order->get_meta( Counterfoil_WooCommerce::META_POST, true );
			if ( $post && Counterfoil_WooCommerce_Documents::belongs_to( $post, $order ) ) {
				$add( $order, 'invoice', $post );
			} else {
				$earlier = Counterfoil_WooCommerce::earlier_number_of( $order );
				$rows[]  = array(
					$order->get_id(),
					$order->get_order_number(),
					'invoice',
					$earlier,
					'',
					'' !== $earlier
						? __( 'Numbered by WP Overnight before Counterfoil: its document is WP Overnight\'s.', 'counterfoil' )
						: __( 'No invoice yet.', 'counterfoil' ),
				);
			}
			foreach ( array_reverse( Counterfoil_WooCommerce_Documents::credit_notes_of( $order ) ) as $note ) {
				$add( $order, 'credit_note', (int) $note['post_id'] );
			}
		}
		$zip->add( 'index.csv', self::csv( $rows ) );
		return $zip->bytes();
	}

	/**
	 * Rows as CSV (RFC 4180; a cell that a spreadsheet would run as a
	 * formula is quoted with a leading apostrophe).
	 *
	 * @param array[] $rows Rows.
	 * @return string
	 */
	private static function csv( array $rows ) {
		$out = '';
		foreach ( $rows as $row ) {
			$cells = array();
			foreach ( $row as $cell ) {
				$cell    = (string) $cell;
				$cell    = preg_match( '/^[=+\-@\t\r]/', $cell ) ? "'" . $cell : $cell;
				$cells[] = '"' . str_replace( '"', '""', $cell ) . '"';
			}
			$out .= implode( ',', $cells ) . "\r\n";
		}
		return $out;
	}

	/**
	 * Sends the zip and ends the request.
	 *
	 * @param int[] $ids Orders.
	 */
	private static function send_zip( array $ids ) {
		$bytes = self::zip( $ids );
		nocache_headers();
		header( 'Content-Type: application/zip' );
		header( 'Content-Disposition: attachment; filename="invoices-' . gmdate( 'Ymd-His' ) . '.zip"' );
		header( 'Content-Length: ' . strlen( $bytes ) );
		header( 'X-Content-Type-Options: nosniff' );
		echo $bytes; // phpcs:ignore WordPress.Security.EscapeOutput.OutputNotEscaped -- a zip archive sent as a download, not HTML.
		exit;
	}

	/** The list's notice after *Number the invoices now*. */
	public static function notice() {
		// phpcs:disable WordPress.Security.NonceVerification.Recommended -- counts shown back to the user who ran the action; nothing is done with them.
		if ( ! isset( $_GET['counterfoil_numbered'] ) || ! current_user_can( 'manage_woocommerce' ) ) {
			return;
		}
		$numbered = absint( wp_unslash( $_GET['counterfoil_numbered'] ) );
		$had      = isset( $_GET['counterfoil_had'] ) ? absint( wp_unslash( $_GET['counterfoil_had'] ) ) : 0;
		$failed   = isset( $_GET['counterfoil_failed'] ) ? absint( wp_unslash( $_GET['counterfoil_failed'] ) ) : 0;
		// phpcs:enable
		$text = sprintf(
			/* translators: 1: orders numbered now, 2: orders that had a number, 3: orders that could not be numbered now. */
			__( 'Invoices numbered now: %1$d. Already numbered: %2$d. Not numbered (see each order\'s notes): %3$d.', 'counterfoil' ),
			$numbered,
			$had,
			$failed
		);
		printf( '<div class="notice notice-%1$s is-dismissible" id="counterfoil-bulk-notice"><p>%2$s</p></div>', esc_attr( $failed ? 'warning' : 'success' ), esc_html( $text ) );
	}
}
