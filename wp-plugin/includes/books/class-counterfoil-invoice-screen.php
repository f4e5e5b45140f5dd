<?php
/**
 * The screen of one invoice or credit note: what was issued, and its
 * e-invoice downloads (UBL, CII, PDF) — or what the site must fill in
 * before a valid one can be made. An issued invoice has no edit screen
 * (nobody edits it), so this read-only page is where it is looked at.
 *
 * Invariants: read-only — a GET of it writes nothing: no row (an
 * invoice's e-invoice input is not frozen by looking at it:
 * Counterfoil_Documents::can_make() checks without keeping; the download
 * freezes it), no option, no transient, no meta; for those who keep the books
 * (Counterfoil_Admin::CAPABILITY); every value escaped on output; the
 * downloads are Counterfoil_Documents' (capability plus nonce), and a
 * format this site cannot write (the PDF without the extension) is named
 * with how to get it, never a link that fails.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * One invoice's screen.
 */
final class Counterfoil_Invoice_Screen {
	/** The page's slug (under Invoices, not listed in the menu). */
	const SLUG = 'counterfoil-invoice';

	/** Hooks. */
	public static function init() {
		add_action( 'admin_menu', array( __CLASS__, 'menu' ) );
		add_action( 'admin_head', array( __CLASS__, 'hide_from_menu' ) );
		add_filter( 'post_row_actions', array( __CLASS__, 'row_actions' ), 15, 2 );
	}

	/** The page, under Invoices. */
	public static function menu() {
		add_submenu_page(
			'edit.php?post_type=' . Counterfoil_Invoice_Type::POST_TYPE,
			__( 'Invoice', 'counterfoil' ),
			__( 'Invoice', 'counterfoil' ),
			Counterfoil_Admin::CAPABILITY,
			self::SLUG,
			array( __CLASS__, 'render' )
		);
	}

	/** Reached from a list's row, not from the menu. */
	public static function hide_from_menu() {
		remove_submenu_page( 'edit.php?post_type=' . Counterfoil_Invoice_Type::POST_TYPE, self::SLUG );
	}

	/**
	 * The screen's URL for a post.
	 *
	 * @param int $post_id Invoice or credit note.
	 * @return string
	 */
	public static function url( $post_id ) {
		return Counterfoil_Invoice_Type::page_url( self::SLUG, $post_id );
	}

	/** The lists' row action "View" (first). */
	public static function row_actions( $actions, $post ) {
		if ( ! Counterfoil_Invoice_Type::is_ours( $post->post_type ) || ! current_user_can( Counterfoil_Admin::CAPABILITY ) ) {
			return $actions;
		}
		return array( 'counterfoil_view' => '<a href="' . esc_url( self::url( $post->ID ) ) . '">' . esc_html__( 'View', 'counterfoil' ) . '</a>' ) + $actions;
	}

	/** The page. */
	public static function render() {
		if ( ! current_user_can( Counterfoil_Admin::CAPABILITY ) ) {
			wp_die( esc_html__( 'You are not allowed to see this invoice.', 'counterfoil' ), 403 );
		}
		$id   = isset( $_GET['invoice'] ) ? absint( $_GET['invoice'] ) : 0; // phpcs:ignore WordPress.Security.NonceVerification.Recommended -- a read-only page.
		$post = $id ? get_post( $id ) : null;
		if ( ! $post || ! Counterfoil_Invoice_Type::is_ours( $post->post_type ) ) {
			wp_die( esc_html__( 'No invoice or credit note of this site.', 'counterfoil' ), 404 );
		}
		$credit = Counterfoil_Invoice_Type::CREDIT_NOTE_TYPE === $post->post_type;
		$meta   = function ( $key ) use ( $post ) {
			return (string) get_post_meta( $post->ID, $key, true );
		};
		$void   = $meta( Counterfoil_Invoice_Type::VOID_META );
		$rows   = array(
			__( 'Number', 'counterfoil' ) => $post->post_title,
			__( 'Issued', 'counterfoil' ) => get_the_date( 'Y-m-d', $post ),
			__( 'Amount', 'counterfoil' ) => trim( $meta( '_counterfoil_amount' ) . ' ' . $meta( '_counterfoil_currency' ) ),
			__( 'Status', 'counterfoil' ) => '' === $void ? __( 'Issued', 'counterfoil' ) : sprintf( /* translators: %s: the reason */ __( 'Void: %s', 'counterfoil' ), $void ),
			__( 'Series', 'counterfoil' ) => $meta( '_counterfoil_scope_key' ),
		);
		if ( ! $credit ) {
			$rows[ __( 'Payment', 'counterfoil' ) ] = trim( $meta( '_counterfoil_gateway' ) . ' ' . $meta( '_counterfoil_transaction_id' ) );
		}
		echo '<div class="wrap" id="counterfoil-invoice-screen">';
		printf(
			'<h1>%s</h1>',
			esc_html(
				sprintf(
					/* translators: %s: the number */
					$credit ? __( 'Credit note %s', 'counterfoil' ) : __( 'Invoice %s', 'counterfoil' ),
					$post->post_title
				)
			)
		);
		echo '<table class="widefat striped" style="max-width:44em"><tbody>';
		foreach ( $rows as $label => $value ) {
			printf( '<tr><th scope="row">%1$s</th><td>%2$s</td></tr>', esc_html( $label ), esc_html( $value ) );
		}
		if ( $credit ) {
			$invoice = get_post( (int) $meta( '_counterfoil_refers_to' ) );
			if ( $invoice ) {
				printf(
					'<tr><th scope="row">%1$s</th><td><a href="%2$s">%3$s</a></td></tr>',
					esc_html__( 'Corrects', 'counterfoil' ),
					esc_url( self::url( $invoice->ID ) ),
					esc_html( $invoice->post_title )
				);
			} elseif ( '' !== (string) $meta( '_counterfoil_refers_to_number' ) ) {
				// An adopted invoice: issued by another plugin, no screen of ours.
				printf(
					'<tr><th scope="row">%1$s</th><td>%2$s</td></tr>',
					esc_html__( 'Corrects', 'counterfoil' ),
					esc_html( (string) $meta( '_counterfoil_refers_to_number' ) )
				);
			}
		}
		echo '</tbody></table>';

		echo '<h2>' . esc_html__( 'E-invoice', 'counterfoil' ) . '</h2>';
		$made = Counterfoil_Documents::can_make( $post );
		if ( is_wp_error( $made ) ) {
			echo '<p class="counterfoil-einvoice-refused">' . esc_html( $made->get_error_message() ) . '</p>';
			echo '<p><a href="' . esc_url( admin_url( 'options-general.php?page=' . Counterfoil_Admin::SLUG . '#counterfoil-seller' ) ) . '">' . esc_html__( 'The seller on e-invoices (settings)', 'counterfoil' ) . '</a></p>';
			echo '</div>';
			return;
		}
		$labels = array(
			'ubl' => __( 'UBL (EN 16931)', 'counterfoil' ),
			'cii' => __( 'CII (UN/CEFACT, EN 16931)', 'counterfoil' ),
			'pdf' => __( 'PDF (Factur-X: the invoice to read, its CII inside)', 'counterfoil' ),
		);
		echo '<ul class="counterfoil-einvoice-downloads">';
		foreach ( $labels as $format => $label ) {
			if ( 'pdf' === $format && ! Counterfoil_Documents::pdf_available() ) {
				echo '<li class="counterfoil-no-pdf">' . esc_html( Counterfoil_Documents::pdf_unavailable_message() ) . '</li>';
				continue;
			}
			printf( '<li><a class="button" href="%1$s">%2$s</a></li>', esc_url( Counterfoil_Documents::url( $post->ID, $format ) ), esc_html( $label ) );
		}
		echo '</ul></div>';
	}
}
