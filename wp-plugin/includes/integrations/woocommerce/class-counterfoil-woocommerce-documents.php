<?php
/**
 * WooCommerce and e-invoices: an order's buyer is its billing address and
 * its lines are its items, shipping and fees (a refund's: its own items,
 * or one line for the amount at the order's single VAT rate); the
 * customer's order e-mails carry the invoice's PDF (Factur-X, when the
 * extension is loaded) and its UBL when they can be made; the customer
 * downloads them from the order's page in My Account.
 *
 * Invariants: read through WooCommerce's CRUD only; the buyer is added to
 * the document input only when the payment carried none and the order is
 * the invoice's (gateway `woocommerce`, transaction the order's id); each
 * line is stated at the VAT rate WooCommerce charged on it (category S),
 * an untaxed one under the seller's default category, and a line with two
 * taxes (compound rates) is not stated at all — the document is refused
 * rather than wrong, never given a line under another VAT treatment; each
 * line states the VAT WooCommerce charged on it (its own rounding per
 * line, within what EN 16931 allows, instead of a rounding amount); the
 * payment is stated as it is: paid only when WooCommerce recorded the
 * payment (a paid date: cash on delivery, bank transfer and on-hold orders
 * have none), else the whole amount due with payment terms and a due date
 * from the settings (BR-CO-25); the means by the order's payment method
 * (card 48, PayPal 68, bank transfer 58 to the seller's IBAN, cash on
 * delivery 10, cheque 20; none when the method is unknown: filter
 * `counterfoil_woocommerce_payment_means`), never the seller's IBAN on a
 * card; the order's number is the sales order reference (BT-14), never the
 * buyer's reference (BT-10), which comes from the order's own meta with the
 * buyer's purchase order (BT-13); the shipping address is the deliver-to
 * address (BG-15) and the completion date the supply date (BT-72); an
 * e-mail never fails for want of a document — it goes without the file,
 * and the reason is logged once; the customer's refund e-mail
 * (`customer_refunded_order`, `customer_partially_refunded_order`) carries
 * the credit note of its own refund (the e-mail's, else the order's newest)
 * and never another refund's.
 *
 * Customers' data stays theirs:
 * - an attachment is a 0600 file in a 0700 folder of its own
 *   (`counterfoil-mail-<random>`) made anew in the system's temporary
 *   directory (get_temp_dir(): outside the web root, unlike the uploads
 *   folder, which the web server serves whatever its mode); the folder is
 *   removed as soon as its e-mail is sent (`woocommerce_email_sent`,
 *   `wp_mail_succeeded`, `wp_mail_failed`), at the request's end at the
 *   latest; only files this class wrote are ever removed;
 * - a download serves an order's own documents only: its invoice (the post's
 *   gateway `woocommerce`, its transaction the order's id) and the credit
 *   notes of its refunds (the refund's parent the order, the credit note's
 *   invoice the order's), else 403 — whatever post id the order's meta names;
 * - who may download: a shop manager (`manage_woocommerce`) or the order's
 *   customer logged in, each with the link's nonce; for a guest's order, the
 *   order's key and its billing e-mail (posted, compared case-insensitively
 *   as WooCommerce's order-received page does since 8.x), never the key
 *   alone; anyone else 403;
 * - the order's key is printed only in a link for a visitor who came with
 *   it (the order-received page's address), never where only the order's id
 *   and e-mail are known (order tracking) and never in an e-mail;
 * - an order is named by its number as WooCommerce shows it
 *   (get_order_number()), never by its id.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * An order's e-invoice.
 */
final class Counterfoil_WooCommerce_Documents {
	/** The customer e-mails that carry the invoice. */
	const EMAILS = array( 'customer_processing_order', 'customer_completed_order', 'customer_invoice' );
	/** The customer's refund e-mails (WooCommerce names a partial refund's apart): they carry the refund's credit note. */
	const REFUND_EMAILS = array( 'customer_refunded_order', 'customer_partially_refunded_order' );
	/** The prefix of an e-mail's private attachments folder in the temporary directory. */
	const MAIL_DIR_PREFIX = 'counterfoil-mail-';

	/** The admin-post action of a customer's download. */
	const ACTION = 'counterfoil_order_document';
	/** What a customer downloads. */
	const CUSTOMER_FORMATS = array( 'pdf', 'ubl' );

	/** The means of payment (UNCL4461) of WooCommerce's own and common payment methods. */
	const PAYMENT_MEANS = array(
		'bacs'                     => '58',
		'cheque'                   => '20',
		'cod'                      => '10',
		'stripe'                   => '48',
		'stripe_cc'                => '48',
		'woocommerce_payments'     => '48',
		'ppcp-credit-card-gateway' => '48',
		'ppcp-gateway'             => '68',
		'paypal'                   => '68',
	);
	/** Order meta a checkout field may fill: the buyer's reference (BT-10), such as a Leitweg-ID. */
	const BUYER_REFERENCE_META = '_counterfoil_buyer_reference';
	/** Order meta a checkout field may fill: the buyer's purchase order (BT-13). */
	const PURCHASE_ORDER_META = '_counterfoil_purchase_order';

	/**
	 * @var array The attachments' folders this request made, not removed yet:
	 *            folder => array( 'email' => the e-mail's id, 'files' => paths ).
	 */
	private static $temporary = array();

	/** Hooks. */
	public static function init() {
		add_filter( 'counterfoil_document_input', array( __CLASS__, 'input' ), 5, 2 );
		add_filter( 'woocommerce_email_attachments', array( __CLASS__, 'attachments' ), 10, 4 );
		add_action( 'admin_post_' . self::ACTION, array( __CLASS__, 'handle_download' ) );
		add_action( 'admin_post_nopriv_' . self::ACTION, array( __CLASS__, 'handle_download' ) );
		add_filter( 'counterfoil_adopted_invoice', array( __CLASS__, 'adopted_invoice' ), 10, 3 );
		add_filter( 'counterfoil_document_sales_order_reference', array( __CLASS__, 'no_sales_order_reference' ), 10, 2 );
	}

	/**
	 * The formats an order's invoice can be had in on this site.
	 *
	 * @return string[]
	 */
	private static function formats() {
		return Counterfoil_Documents::pdf_available() ? self::CUSTOMER_FORMATS : array( 'ubl' );
	}

	/**
	 * The download link of an order's invoice, or of one of its credit notes,
	 * for the visitor: with a nonce for the order's customer logged in or a
	 * shop manager; for a guest's order, with its key only when the visitor
	 * came with the key (the order-received page) — the e-mail is asked on
	 * the way; '' when the visitor has no way in (no key is ever printed for
	 * one who did not show it).
	 *
	 * @param WC_Order $order       Order.
	 * @param string   $format      pdf or ubl.
	 * @param int      $credit_note A credit note's post id (0: the invoice).
	 * @return string
	 */
	public static function customer_url( $order, $format, $credit_note = 0 ) {
		$args = array(
			'action' => self::ACTION,
			'order'  => $order->get_id(),
			'format' => $format,
		);
		if ( $credit_note ) {
			$args['credit_note'] = (int) $credit_note;
		}
		$url = add_query_arg( $args, admin_url( 'admin-post.php' ) );
		if ( self::by_nonce( $order ) ) {
			return wp_nonce_url( $url, self::ACTION . '_' . $order->get_id() );
		}
		$key = self::key_shown( $order );
		return 0 === (int) $order->get_customer_id() && '' !== $key ? add_query_arg( 'key', rawurlencode( $key ), $url ) : '';
	}

	/**
	 * Whether the visitor downloads an order's documents as a logged-in user
	 * with a nonce: a shop manager, or the order's own customer.
	 *
	 * @param WC_Order $order Order.
	 * @return bool
	 */
	private static function by_nonce( $order ) {
		if ( ! is_user_logged_in() ) {
			return false;
		}
		$customer = (int) $order->get_customer_id();
		return current_user_can( 'manage_woocommerce' ) || ( 0 !== $customer && get_current_user_id() === $customer );
	}

	/**
	 * The order's key when this request came with it (WooCommerce's
	 * order-received page carries it in its address), else ''.
	 *
	 * @param WC_Order $order Order.
	 * @return string
	 */
	private static function key_shown( $order ) {
		// phpcs:ignore WordPress.Security.NonceVerification.Recommended -- read only to compare with the order's key (a guest's proof, as WooCommerce's own page reads it).
		$key       = isset( $_GET['key'] ) && is_string( $_GET['key'] ) ? sanitize_text_field( wp_unslash( $_GET['key'] ) ) : '';
		$order_key = (string) $order->get_order_key();
		return '' !== $key && '' !== $order_key && hash_equals( $order_key, $key ) ? $key : '';
	}

	/**
	 * The credit notes of an order's refunds, newest refund first: post id,
	 * number as issued, refund id (only the order's own).
	 *
	 * @param WC_Order $order Order.
	 * @return array[]
	 */
	public static function credit_notes_of( $order ) {
		$out = array();
		foreach ( self::refunds_newest_first( $order ) as $refund ) {
			$post = (int) $refund->get_meta( Counterfoil_WooCommerce::META_CREDIT_NOTE_POST, true );
			if ( $post && self::belongs_to( $post, $order ) ) {
				$out[] = array(
					'post_id'   => $post,
					'number'    => (string) get_the_title( $post ),
					'refund_id' => (int) $refund->get_id(),
				);
			}
		}
		return $out;
	}

	/**
	 * An order's refunds, the newest (the highest id) first.
	 *
	 * @param WC_Order $order Order.
	 * @return WC_Order_Refund[]
	 */
	private static function refunds_newest_first( $order ) {
		$refunds = is_callable( array( $order, 'get_refunds' ) ) ? array_values( array_filter( (array) $order->get_refunds() ) ) : array();
		usort(
			$refunds,
			function ( $a, $b ) {
				return (int) $b->get_id() - (int) $a->get_id();
			}
		);
		return $refunds;
	}

	/**
	 * Whether an invoice or credit note post is the order's own: an invoice
	 * of gateway `woocommerce` whose transaction is the order's id, or a
	 * credit note of that gateway for a refund of the order, correcting the
	 * order's invoice.
	 *
	 * @param int      $post_id Post.
	 * @param WC_Order $order   Order.
	 * @return bool
	 */
	public static function belongs_to( $post_id, $order ) {
		$post = $post_id ? get_post( (int) $post_id ) : null;
		if ( ! $post || Counterfoil_WooCommerce::GATEWAY !== get_post_meta( $post->ID, '_counterfoil_gateway', true ) ) {
			return false;
		}
		$transaction = (string) get_post_meta( $post->ID, '_counterfoil_transaction_id', true );
		if ( Counterfoil_Invoice_Type::POST_TYPE === $post->post_type ) {
			return (string) $order->get_id() === $transaction;
		}
		if ( Counterfoil_Invoice_Type::CREDIT_NOTE_TYPE !== $post->post_type || ! ctype_digit( $transaction ) ) {
			return false;
		}
		$refund  = wc_get_order( (int) $transaction );
		$invoice = (int) get_post_meta( $post->ID, '_counterfoil_refers_to', true );
		if ( ! $refund || 'shop_order_refund' !== $refund->get_type() || (int) $refund->get_parent_id() !== (int) $order->get_id() ) {
			return false;
		}
		if ( ! $invoice ) {
			// An adopted invoice (WP Overnight's, no post of ours): the
			// registry's row of the order's payment.
			$adopted = Counterfoil_Credit_Notes::adopted_invoice( Counterfoil_WooCommerce::GATEWAY, (string) $order->get_id() );
			return null !== $adopted && $adopted['scope_key'] === (string) get_post_meta( $post->ID, '_counterfoil_refers_scope', true )
				&& (string) $adopted['number'] === (string) get_post_meta( $post->ID, '_counterfoil_refers_number', true );
		}
		return Counterfoil_Invoice_Type::POST_TYPE === get_post_type( $invoice ) && self::belongs_to( $invoice, $order );
	}

	/**
	 * The download links of an order's invoice (or credit note), printed.
	 *
	 * @param WC_Order $order       Order.
	 * @param int      $credit_note A credit note's post id (0: the invoice).
	 * @param array    $labels      format => label.
	 * @param string   $class       The links' class.
	 */
	public static function print_links( $order, $credit_note, array $labels, $class ) {
		foreach ( self::formats() as $format ) {
			$url = self::customer_url( $order, $format, $credit_note );
			if ( '' !== $url ) {
				printf( '<a class="%1$s" href="%2$s">%3$s</a> ', esc_attr( $class ), esc_url( $url ), esc_html( $labels[ $format ] ) );
			}
		}
	}

	/**
	 * My Account's order view (and the thank-you page): the invoice's
	 * downloads, and each credit note's number and downloads.
	 *
	 * @param WC_Order $order Order.
	 */
	public static function customer_links( $order ) {
		$post = (int) $order->get_meta( Counterfoil_WooCommerce::META_POST, true );
		if ( ! $post || ! self::belongs_to( $post, $order ) || '' === self::customer_url( $order, 'ubl' ) || is_wp_error( Counterfoil_Documents::can_make( $post ) ) ) {
			return;
		}
		echo '<p class="counterfoil-customer-documents">';
		self::print_links(
			$order,
			0,
			array(
				'pdf' => __( 'Download the invoice (PDF)', 'counterfoil' ),
				'ubl' => __( 'E-invoice (UBL)', 'counterfoil' ),
			),
			'woocommerce-button button'
		);
		echo '</p>';
		$notes = self::credit_notes_of( $order );
		if ( empty( $notes ) ) {
			return;
		}
		echo '<ul class="counterfoil-customer-credit-notes">';
		foreach ( $notes as $note ) {
			/* translators: %s: credit note number */
			echo '<li><strong>' . esc_html( sprintf( __( 'Credit note %s', 'counterfoil' ), $note['number'] ) ) . '</strong> ';
			self::print_links(
				$order,
				$note['post_id'],
				array(
					'pdf' => __( 'PDF', 'counterfoil' ),
					'ubl' => __( 'E-invoice (UBL)', 'counterfoil' ),
				),
				'woocommerce-button button'
			);
			echo '</li>';
		}
		echo '</ul>';
	}

	/**
	 * A request's parameter (the link's query, or the e-mail form's body).
	 *
	 * @param string $name Name.
	 * @return string
	 */
	private static function param( $name ) {
		// phpcs:disable WordPress.Security.NonceVerification -- read to be checked: the nonce, or a guest's key and e-mail, in handle_download().
		if ( isset( $_POST[ $name ] ) && is_string( $_POST[ $name ] ) ) {
			return sanitize_text_field( wp_unslash( $_POST[ $name ] ) );
		}
		return isset( $_GET[ $name ] ) && is_string( $_GET[ $name ] ) ? sanitize_text_field( wp_unslash( $_GET[ $name ] ) ) : '';
		// phpcs:enable
	}

	/**
	 * Sends an order's invoice, or one of its credit notes (`credit_note`),
	 * to who may have it: a shop manager or the order's customer with the
	 * link's nonce, or, for a guest's order, the holder of its key and its
	 * billing e-mail; only the order's own documents.
	 */
	public static function handle_download() {
		$id          = absint( self::param( 'order' ) );
		$format      = sanitize_key( self::param( 'format' ) );
		$credit_note = absint( self::param( 'credit_note' ) );
		$order       = $id ? wc_get_order( $id ) : null;
		$refused     = function () {
			wp_die( esc_html__( 'You are not allowed to download this invoice.', 'counterfoil' ), '', array( 'response' => 403 ) );
		};
		if ( ! $order || 'shop_order' !== $order->get_type() || ! in_array( $format, self::formats(), true ) ) {
			$refused();
		}
		if ( self::by_nonce( $order ) ) {
			if ( ! wp_verify_nonce( self::param( '_wpnonce' ), self::ACTION . '_' . $id ) ) {
				$refused();
			}
		} elseif ( 0 !== (int) $order->get_customer_id() ) {
			$refused();
		} else {
			self::check_guest( $order, $format, $credit_note );
		}
		$post = $credit_note ? $credit_note : (int) $order->get_meta( Counterfoil_WooCommerce::META_POST, true );
		if ( ! $post ) {
			wp_die( esc_html__( 'This order has no invoice to download yet.', 'counterfoil' ), '', array( 'response' => 404 ) );
		}
		if ( ! self::belongs_to( $post, $order ) ) {
			$refused();
		}
		$bytes = Counterfoil_Documents::document( $post, $format );
		if ( is_wp_error( $bytes ) ) {
			wp_die( esc_html__( 'This order has no invoice to download yet.', 'counterfoil' ), '', array( 'response' => 404 ) );
		}
		Counterfoil_Documents::send( $bytes, get_the_title( $post ), $format );
	}

	/**
	 * A guest's proof, as WooCommerce's order-received page asks it: the
	 * order's key and its billing e-mail (posted; case-insensitive). Without
	 * the e-mail, or with another, a 403 page asks for it; without the key, a
	 * plain 403. Returns only when both are right.
	 *
	 * @param WC_Order $order       Order.
	 * @param string   $format      Format.
	 * @param int      $credit_note Credit note post id, or 0.
	 */
	private static function check_guest( $order, $format, $credit_note ) {
		$key       = self::param( 'key' );
		$order_key = (string) $order->get_order_key();
		if ( '' === $key || '' === $order_key || ! hash_equals( $order_key, $key ) ) {
			wp_die( esc_html__( 'You are not allowed to download this invoice.', 'counterfoil' ), '', array( 'response' => 403 ) );
		}
		// phpcs:ignore WordPress.Security.NonceVerification.Missing -- a guest's proof with the order's key, as WooCommerce's verify-email form; a download changes nothing.
		$email   = isset( $_POST['email'] ) && is_string( $_POST['email'] ) ? sanitize_email( wp_unslash( $_POST['email'] ) ) : '';
		$billing = trim( (string) $order->get_billing_email() );
		if ( '' !== $email && '' !== $billing && 0 === strcasecmp( $email, $billing ) ) {
			return;
		}
		$fields = array(
			'action' => self::ACTION,
			'order'  => (string) $order->get_id(),
			'format' => $format,
			'key'    => $key,
		);
		if ( $credit_note ) {
			$fields['credit_note'] = (string) $credit_note;
		}
		$form  = '<p>' . ( '' !== $email
			? esc_html__( 'That is not the e-mail address of this order.', 'counterfoil' )
			: esc_html__( 'To download this document, please confirm the e-mail address of the order.', 'counterfoil' ) ) . '</p>';
		$form .= '<form method="post" action="' . esc_url( admin_url( 'admin-post.php' ) ) . '">';
		foreach ( $fields as $name => $value ) {
			$form .= '<input type="hidden" name="' . esc_attr( $name ) . '" value="' . esc_attr( $value ) . '" />';
		}
		$form .= '<p><label for="counterfoil-email">' . esc_html__( 'E-mail address', 'counterfoil' ) . '</label> <input type="email" id="counterfoil-email" name="email" required autocomplete="email" /></p>';
		$form .= '<p><button type="submit">' . esc_html__( 'Download', 'counterfoil' ) . '</button></p></form>';
		wp_die( $form, esc_html__( 'Confirm your e-mail address', 'counterfoil' ), array( 'response' => 403 ) ); // phpcs:ignore WordPress.Security.EscapeOutput.OutputNotEscaped -- every part escaped above.
	}

	/**
	 * The order of an invoice post, or null.
	 *
	 * @param WP_Post $post Invoice or credit note.
	 * @return WC_Order|null
	 */
	private static function order_of( WP_Post $post ) {
		$invoice = $post;
		if ( Counterfoil_Invoice_Type::CREDIT_NOTE_TYPE === $post->post_type ) {
			$invoice = get_post( (int) get_post_meta( $post->ID, '_counterfoil_refers_to', true ) );
			if ( ! $invoice && Counterfoil_WooCommerce::GATEWAY === get_post_meta( $post->ID, '_counterfoil_gateway', true ) ) {
				// A credit note of an adopted invoice: its refund's order.
				$refund = wc_get_order( (int) get_post_meta( $post->ID, '_counterfoil_transaction_id', true ) );
				$order  = $refund && 'shop_order_refund' === $refund->get_type() ? wc_get_order( (int) $refund->get_parent_id() ) : null;
				return $order && 'shop_order' === $order->get_type() && self::belongs_to( $post->ID, $order ) ? $order : null;
			}
		}
		if ( ! $invoice || Counterfoil_WooCommerce::GATEWAY !== get_post_meta( $invoice->ID, '_counterfoil_gateway', true ) ) {
			return null;
		}
		// At issue, the order being numbered (as WooCommerce just saved it),
		// rather than a copy read again.
		$id    = (int) get_post_meta( $invoice->ID, '_counterfoil_transaction_id', true );
		$order = Counterfoil_WooCommerce::order_in_hand( $id );
		$order = $order ? $order : wc_get_order( $id );
		return $order && 'shop_order' === $order->get_type() ? $order : null;
	}

	/**
	 * Hooked on counterfoil_document_sales_order_reference: an order's
	 * reference is its number as WooCommerce shows it (input() sets it),
	 * never its id.
	 *
	 * @param string $reference The transaction id (the order's id).
	 * @param string $gateway   The gateway.
	 * @return string
	 */
	public static function no_sales_order_reference( $reference, $gateway ) {
		return Counterfoil_WooCommerce::GATEWAY === $gateway ? '' : $reference;
	}

	/**
	 * Hooked on counterfoil_adopted_invoice: an order's invoice that WP
	 * Overnight issued before Counterfoil (adopted), as WP Overnight stated
	 * it — its formatted number, its date (`_wcpdf_invoice_date`, by the
	 * site's clock) — for the order's total in its currency.
	 *
	 * @param array|null $invoice     An earlier answer.
	 * @param string     $gateway     Gateway.
	 * @param string     $transaction The order's id.
	 * @return array|null
	 */
	public static function adopted_invoice( $invoice, $gateway, $transaction ) {
		if ( null !== $invoice || Counterfoil_WooCommerce::GATEWAY !== $gateway || ! ctype_digit( (string) $transaction ) ) {
			return $invoice;
		}
		$order = wc_get_order( (int) $transaction );
		if ( ! $order || 'shop_order' !== $order->get_type() ) {
			return null;
		}
		$number   = Counterfoil_WooCommerce::earlier_number_of( $order );
		$currency = strtoupper( (string) $order->get_currency() );
		$amount   = Counterfoil_WooCommerce::amount( $order->get_total(), $currency );
		if ( '' === $number || is_wp_error( $amount ) ) {
			return null;
		}
		$at = (int) $order->get_meta( '_wcpdf_invoice_date', true );
		return array(
			'number_as_issued' => $number,
			'date'             => $at > 0 ? wp_date( 'Y-m-d', $at ) : '',
			'amount'           => $amount,
			'currency'         => $currency,
		);
	}

	/**
	 * The buyer of an order: its billing address (the party shape).
	 *
	 * @param WC_Order $order Order.
	 * @return array
	 */
	public static function buyer_of( $order ) {
		$name  = trim( $order->get_billing_company() );
		$name  = '' !== $name ? $name : trim( $order->get_billing_first_name() . ' ' . $order->get_billing_last_name() );
		$buyer = array(
			'name'     => $name,
			'street'   => trim( $order->get_billing_address_1() . ' ' . $order->get_billing_address_2() ),
			'city'     => $order->get_billing_city(),
			'postcode' => $order->get_billing_postcode(),
			'country'  => strtoupper( (string) $order->get_billing_country() ),
			'email'    => $order->get_billing_email(),
		);
		if ( '' !== (string) $buyer['email'] ) {
			$buyer['electronic_address']        = $buyer['email'];
			$buyer['electronic_address_scheme'] = 'EM';
		}
		/**
		 * The buyer of an order's e-invoice (add a VAT id kept by another plugin).
		 *
		 * @param array    $buyer The billing address in the party shape.
		 * @param WC_Order $order The order.
		 */
		$buyer = apply_filters( 'counterfoil_woocommerce_buyer', $buyer, $order );
		return array_filter(
			(array) $buyer,
			function ( $v ) {
				return is_string( $v ) && '' !== trim( $v );
			}
		);
	}

	/**
	 * A decimal string of a WooCommerce amount or rate (absolute value).
	 *
	 * @param mixed $v Amount.
	 * @return string
	 */
	private static function decimal( $v ) {
		$s = rtrim( rtrim( number_format( abs( (float) $v ), 6, '.', '' ), '0' ), '.' );
		return '' === $s ? '0' : $s;
	}

	/**
	 * The lines of an order or a refund: its items, shipping and fees, or
	 * null when it has none or one cannot be stated (two taxes on a line;
	 * an untaxed line and no default category in the settings).
	 *
	 * @param WC_Abstract_Order $order  Order or refund.
	 * @param array             $seller The seller (default_vat_category).
	 * @return array|null
	 */
	public static function lines_of( $order, array $seller ) {
		$items = $order->get_items( array( 'line_item', 'shipping', 'fee' ) );
		if ( empty( $items ) ) {
			return null;
		}
		$lines = array();
		foreach ( $items as $item ) {
			$taxes = $item->get_taxes();
			$taxed = array_filter(
				isset( $taxes['total'] ) && is_array( $taxes['total'] ) ? $taxes['total'] : array(),
				function ( $t ) {
					return '' !== $t && 0.0 !== (float) $t;
				}
			);
			if ( count( $taxed ) > 1 ) {
				return null;
			}
			$rate_id = 1 === count( $taxed ) ? (int) key( $taxed ) : null;
			$vat     = Counterfoil_Vat_Categories::of_line(
				$rate_id,
				null !== $rate_id ? self::decimal( self::rate_charged( $order, $rate_id ) ) : '0',
				is_callable( array( $item, 'get_tax_class' ) ) ? (string) $item->get_tax_class() : '',
				$seller
			);
			if ( null === $vat ) {
				return null;
			}
			$total    = (float) $item->get_total();
			$quantity = 'line_item' === $item->get_type() ? abs( (float) $item->get_quantity() ) : 1.0;
			$name     = (string) $item->get_name();
			if ( 'shipping' === $item->get_type() ) {
				/* translators: %s: the shipping method */
				$name = sprintf( __( 'Shipping: %s', 'counterfoil' ), $name );
			}
			// A price that divides exactly (to 6 decimals) keeps the quantity; else one line of the whole.
			$price = $quantity > 0 ? self::decimal( $total / $quantity ) : '';
			if ( $quantity <= 0 || abs( (float) $price * $quantity - abs( $total ) ) > 0.0000005 || floor( $quantity ) !== $quantity ) {
				/* translators: 1: quantity, 2: item */
				$name     = $quantity > 1 ? sprintf( __( '%1$s × %2$s', 'counterfoil' ), self::decimal( $quantity ), $name ) : $name;
				$quantity = 1.0;
				$price    = self::decimal( $total );
			}
			// A refund states positive amounts; a discount fee on an order is a negative quantity.
			$negative = $total < 0 && 'shop_order_refund' !== $order->get_type();
			$line     = array(
				'name'       => '' === trim( $name ) ? __( 'Item', 'counterfoil' ) : $name,
				'quantity'   => ( $negative ? '-' : '' ) . self::decimal( $quantity ),
				'unit_price' => $price,
			) + $vat;
			// The VAT WooCommerce charged on this line, as it rounded it
			// (a discount's VAT is negative, as its quantity).
			if ( 1 === count( $taxed ) ) {
				$line['vat_amount'] = ( $negative ? '-' : '' ) . self::decimal( reset( $taxed ) );
			}
			if ( 'line_item' === $item->get_type() && is_callable( array( $item, 'get_product' ) ) ) {
				$product = $item->get_product();
				if ( $product && '' !== (string) $product->get_sku() ) {
					$line['seller_item_id'] = (string) $product->get_sku();
				}
				$gtin = $product && is_callable( array( $product, 'get_global_unique_id' ) ) ? (string) $product->get_global_unique_id() : '';
				if ( '' !== $gtin && Counterfoil_Einvoice::is_gtin( $gtin ) ) {
					$line['gtin'] = $gtin;
				}
			}
			$lines[] = $line;
		}
		return $lines;
	}

	/**
	 * The rate a tax was charged at: the order's own tax item's (the rate
	 * as charged, WooCommerce 3.7+), else the tax table's.
	 *
	 * @param WC_Abstract_Order $order Order or refund.
	 * @param int               $id    Tax rate id.
	 * @return float|string
	 */
	private static function rate_charged( $order, $id ) {
		$source = 'shop_order_refund' === $order->get_type() && $order->get_parent_id() ? wc_get_order( $order->get_parent_id() ) : $order;
		foreach ( $source ? $source->get_items( 'tax' ) : array() as $tax ) {
			if ( is_callable( array( $tax, 'get_rate_percent' ) ) && (int) $tax->get_rate_id() === $id && null !== $tax->get_rate_percent() ) {
				return $tax->get_rate_percent();
			}
		}
		return WC_Tax::get_rate_percent_value( $id );
	}

	/**
	 * What an order's invoice states of its payment: paid only when
	 * WooCommerce recorded it (a paid date), else the whole amount due with
	 * the seller's payment terms and a due date; the means by the payment
	 * method.
	 *
	 * @param WC_Order $order      The order.
	 * @param array    $seller     The seller (payment_terms, payment_days).
	 * @param string   $issue_date The invoice's issue date.
	 * @return array The input's payment fields.
	 */
	public static function payment_state_of( $order, array $seller, $issue_date ) {
		$method = is_callable( array( $order, 'get_payment_method' ) ) ? (string) $order->get_payment_method() : '';
		$means  = isset( self::PAYMENT_MEANS[ $method ] ) ? self::PAYMENT_MEANS[ $method ] : '';
		if ( '58' === $means && empty( $seller['iban'] ) ) {
			$means = '';
		}
		/**
		 * The means of payment (UNCL4461 code: 48 card, 58 SEPA transfer, 10
		 * cash …) an order's invoice states; empty states none.
		 *
		 * @param string   $means  The code for the order's payment method, or ''.
		 * @param string   $method The payment method's id.
		 * @param WC_Order $order  The order.
		 */
		$means = (string) apply_filters( 'counterfoil_woocommerce_payment_means', $means, $method, $order );
		$out   = array( 'paid' => null !== $order->get_date_paid() );
		if ( '' !== $means ) {
			$out['payment_means'] = $means;
		}
		if ( $out['paid'] ) {
			return $out;
		}
		$days = isset( $seller['payment_days'] ) && ctype_digit( (string) $seller['payment_days'] ) ? (int) $seller['payment_days'] : 14;
		if ( 'cod' === $method ) {
			$out['payment_terms'] = __( 'Cash on delivery: payable to the courier on delivery.', 'counterfoil' );
			return $out;
		}
		$due = DateTimeImmutable::createFromFormat( '!Y-m-d', (string) $issue_date );
		if ( $due ) {
			$out['due_date'] = $due->modify( '+' . $days . ' days' )->format( 'Y-m-d' );
		}
		$out['payment_terms'] = ! empty( $seller['payment_terms'] )
			? (string) $seller['payment_terms']
			/* translators: %d: days */
			: sprintf( __( 'Payable within %d days of the invoice date.', 'counterfoil' ), $days );
		return $out;
	}

	/**
	 * An order's references and delivery: its number as the sales order
	 * (BT-14), the buyer's reference and purchase order from its meta
	 * (BT-10, BT-13), the shipping address (BG-15) and completion date (BT-72).
	 *
	 * @param WC_Order $order The order.
	 * @return array The input's fields (buyer_reference null: none).
	 */
	public static function references_of( $order ) {
		$out = array(
			'buyer_reference'       => null,
			'sales_order_reference' => (string) $order->get_order_number(),
		);
		foreach ( array( 'buyer_reference' => self::BUYER_REFERENCE_META, 'order_reference' => self::PURCHASE_ORDER_META ) as $key => $meta ) {
			$value = trim( (string) $order->get_meta( $meta ) );
			if ( '' !== $value ) {
				$out[ $key ] = $value;
			}
		}
		$country = is_callable( array( $order, 'get_shipping_country' ) ) ? strtoupper( (string) $order->get_shipping_country() ) : '';
		if ( '' !== $country ) {
			$name              = trim( (string) $order->get_shipping_company() );
			$name              = '' !== $name ? $name : trim( $order->get_shipping_first_name() . ' ' . $order->get_shipping_last_name() );
			$out['deliver_to'] = array_filter(
				array(
					'name'     => $name,
					'street'   => trim( $order->get_shipping_address_1() . ' ' . $order->get_shipping_address_2() ),
					'city'     => (string) $order->get_shipping_city(),
					'postcode' => (string) $order->get_shipping_postcode(),
					'country'  => $country,
				),
				'strlen'
			);
		}
		$completed = is_callable( array( $order, 'get_date_completed' ) ) ? $order->get_date_completed() : null;
		if ( $completed ) {
			$out['supply_date'] = $completed->date( 'Y-m-d' );
		}
		return $out;
	}

	/**
	 * A refund without items: one line for its amount at the order's one
	 * VAT rate (null when the order's lines have more than one).
	 *
	 * @param WC_Order $order  The order.
	 * @param string   $amount The refund's amount with VAT.
	 * @param array    $seller The seller.
	 * @return array|null
	 */
	private static function refund_line( $order, $amount, array $seller ) {
		$lines = self::lines_of( $order, $seller );
		if ( null === $lines ) {
			return null;
		}
		$rates = array();
		foreach ( $lines as $l ) {
			$rates[ $l['vat_category'] . ' ' . $l['vat_rate'] ] = $l;
		}
		if ( 1 !== count( $rates ) ) {
			return null;
		}
		$one = reset( $rates );
		return array(
			array(
				/* translators: %s: the order's number */
				'name'         => sprintf( __( 'Refund of order #%s', 'counterfoil' ), $order->get_order_number() ),
				'quantity'     => '1',
				'unit_price'   => number_format( (float) $amount / ( 1 + (float) $one['vat_rate'] / 100 ), 2, '.', '' ),
				'vat_rate'     => $one['vat_rate'],
				'vat_category' => $one['vat_category'],
			) + array_intersect_key( $one, array_flip( array( 'vat_exemption_code', 'vat_exemption_reason' ) ) ),
		);
	}

	/**
	 * Hooked on counterfoil_document_input: an order's buyer, when the
	 * payment carried none, and its lines (a refund's for a credit note).
	 *
	 * @param array   $input Document input.
	 * @param WP_Post $post  Invoice or credit note.
	 * @return array
	 */
	public static function input( $input, $post ) {
		if ( ! ( $post instanceof WP_Post ) ) {
			return $input;
		}
		$order = self::order_of( $post );
		if ( ! $order ) {
			return $input;
		}
		if ( empty( $input['buyer'] ) ) {
			$input['buyer'] = self::buyer_of( $order );
		}
		$seller = isset( $input['seller'] ) && is_array( $input['seller'] ) ? $input['seller'] : array();
		$input  = array_merge( $input, self::references_of( $order ) );
		if ( null === $input['buyer_reference'] ) {
			unset( $input['buyer_reference'] );
		}
		if ( Counterfoil_Invoice_Type::CREDIT_NOTE_TYPE !== $post->post_type ) {
			$input = array_merge( $input, self::payment_state_of( $order, $seller, (string) $input['issue_date'] ) );
		}
		if ( Counterfoil_Invoice_Type::CREDIT_NOTE_TYPE === $post->post_type ) {
			$refund = wc_get_order( (int) get_post_meta( $post->ID, '_counterfoil_transaction_id', true ) );
			$lines  = null;
			if ( $refund && 'shop_order_refund' === $refund->get_type() ) {
				$lines = self::lines_of( $refund, $seller );
				$lines = null === $lines ? self::refund_line( $order, (string) get_post_meta( $post->ID, '_counterfoil_amount', true ), $seller ) : $lines;
			}
		} else {
			$lines = self::lines_of( $order, $seller );
		}
		// Lines that cannot be stated leave none: the document is refused
		// naming BG-25, never made of a default line under another VAT
		// treatment. An order without items is a payment without lines: the
		// seller's default line for payments without lines, as any other.
		$source = Counterfoil_Invoice_Type::CREDIT_NOTE_TYPE === $post->post_type && isset( $refund ) && $refund ? $refund : $order;
		if ( null !== $lines ) {
			$input['lines'] = $lines;
		} elseif ( array() !== $source->get_items( array( 'line_item', 'shipping', 'fee' ) ) ) {
			$input['lines'] = array();
		}
		return $input;
	}

	/**
	 * Hooked on woocommerce_email_attachments: the invoice's PDF (with the
	 * extension) and UBL on the customer's order e-mails; on the refund
	 * e-mail, its refund's credit note.
	 *
	 * @param array  $attachments Files.
	 * @param string $email_id    The e-mail.
	 * @param mixed  $order       The order (or another object).
	 * @param mixed  $email       The WC_Email (a refund e-mail's carries its refund).
	 * @return array
	 */
	public static function attachments( $attachments, $email_id, $order = null, $email = null ) {
		$refund_email = in_array( $email_id, self::REFUND_EMAILS, true );
		if ( ( ! $refund_email && ! in_array( $email_id, self::EMAILS, true ) ) || ! is_object( $order ) || ! is_a( $order, 'WC_Order' ) ) {
			return $attachments;
		}
		$post = $refund_email ? self::refund_credit_note( $order, $email ) : (int) $order->get_meta( Counterfoil_WooCommerce::META_POST, true );
		if ( ! $post || ! self::belongs_to( $post, $order ) ) {
			return $attachments;
		}
		$files = array();
		foreach ( self::formats() as $format ) {
			// Made from the e-mail's order, not a copy read again (an input
			// not frozen yet is built from it).
			$bytes = Counterfoil_WooCommerce::with_order_in_hand(
				$order,
				function () use ( $post, $format ) {
					return Counterfoil_Documents::document( $post, $format );
				}
			);
			// Made (its input frozen if valid) or refused: either way the
			// freeze held at issue is not tried again.
			Counterfoil_WooCommerce::document_made( $post );
			if ( is_wp_error( $bytes ) ) {
				Counterfoil_Log::once( 'woocommerce-email-document:' . $bytes->get_error_code(), sprintf( 'order %d: no e-invoice on its e-mail: %s', $order->get_id(), $bytes->get_error_message() ) );
				return $attachments;
			}
			$files[ sanitize_file_name( get_the_title( $post ) ) . Counterfoil_Documents::FORMATS[ $format ][1] ] = $bytes;
		}
		$written = self::write_private( $files, (string) $email_id );
		if ( null === $written ) {
			Counterfoil_Log::once( 'woocommerce-email-document:write', sprintf( 'order %d: no e-invoice on its e-mail: its private folder could not be written in %s', $order->get_id(), get_temp_dir() ) );
			return $attachments;
		}
		return array_merge( (array) $attachments, $written );
	}

	/**
	 * The credit note a refund e-mail carries: its own refund's (the
	 * e-mail's `refund`, WC_Email_Customer_Refunded_Order's), else the
	 * order's newest refund's; 0 when that refund has none (never another
	 * refund's).
	 *
	 * @param WC_Order $order The order.
	 * @param mixed    $email The e-mail.
	 * @return int The credit note's post id, or 0.
	 */
	private static function refund_credit_note( $order, $email ) {
		$refund = is_object( $email ) && isset( $email->refund ) && is_object( $email->refund ) ? $email->refund : null;
		if ( ! $refund || ! is_callable( array( $refund, 'get_parent_id' ) ) || (int) $refund->get_parent_id() !== (int) $order->get_id() ) {
			$refunds = self::refunds_newest_first( $order );
			$refund  = $refunds ? $refunds[0] : null;
		}
		return $refund ? (int) $refund->get_meta( Counterfoil_WooCommerce::META_CREDIT_NOTE_POST, true ) : 0;
	}

	/**
	 * Writes an e-mail's files to a new folder of their own (0700) in the
	 * temporary directory, each file 0600, and has them removed once the
	 * e-mail is sent.
	 *
	 * @param array  $files    File name => bytes.
	 * @param string $email_id The e-mail.
	 * @return string[]|null The paths, or null (nothing left behind).
	 */
	private static function write_private( array $files, $email_id ) {
		$base = untrailingslashit( get_temp_dir() );
		$dir  = '';
		// mkdir() makes a folder that did not exist (never one another user
		// placed there first); the umask can only narrow 0700.
		for ( $try = 0; $try < 3 && '' === $dir; $try++ ) {
			$candidate = $base . '/' . self::MAIL_DIR_PREFIX . wp_generate_password( 20, false );
			// phpcs:ignore WordPress.PHP.NoSilencedErrors.Discouraged, WordPress.WP.AlternativeFunctions.file_system_operations_mkdir -- a private folder, made exclusively (WP_Filesystem cannot); a name taken is tried again.
			if ( @mkdir( $candidate, 0700 ) ) {
				$dir = $candidate;
			}
		}
		if ( '' === $dir ) {
			return null;
		}
		// phpcs:ignore WordPress.WP.AlternativeFunctions.file_system_operations_chmod -- the folder's mode exactly 0700.
		if ( ! chmod( $dir, 0700 ) ) {
			@rmdir( $dir ); // phpcs:ignore WordPress.PHP.NoSilencedErrors.Discouraged,WordPress.WP.AlternativeFunctions.file_system_operations_rmdir -- its own empty folder.
			return null;
		}
		if ( empty( self::$temporary ) ) {
			self::hook_removal();
		}
		self::$temporary[ $dir ] = array(
			'email' => $email_id,
			'files' => array(),
		);
		foreach ( $files as $name => $bytes ) {
			$file = $dir . '/' . $name;
			// phpcs:disable WordPress.WP.AlternativeFunctions -- a private temporary file: made exclusively ('x'), 0600 before its bytes.
			$handle = fopen( $file, 'xb' );
			if ( false === $handle ) {
				self::remove_folder( $dir );
				return null;
			}
			self::$temporary[ $dir ]['files'][] = $file;

			$ok = chmod( $file, 0600 ) && strlen( $bytes ) === fwrite( $handle, $bytes );
			$ok = fclose( $handle ) && $ok;
			// phpcs:enable
			if ( ! $ok ) {
				self::remove_folder( $dir );
				return null;
			}
		}
		return self::$temporary[ $dir ]['files'];
	}

	/** Hooks the attachments' removal: once their e-mail is sent, or at the request's end. */
	private static function hook_removal() {
		add_action( 'woocommerce_email_sent', array( __CLASS__, 'on_email_sent' ), 10, 2 );
		add_action( 'wp_mail_succeeded', array( __CLASS__, 'on_mail_done' ) );
		add_action( 'wp_mail_failed', array( __CLASS__, 'on_mail_done' ) );
		add_action( 'shutdown', array( __CLASS__, 'remove_temporary' ) );
	}

	/**
	 * Hooked on woocommerce_email_sent (WC_Email::send(), sent or not): the
	 * folders made for that e-mail go.
	 *
	 * @param bool   $sent     Whether sent.
	 * @param string $email_id The e-mail.
	 */
	public static function on_email_sent( $sent, $email_id = '' ) {
		unset( $sent );
		foreach ( self::$temporary as $dir => $made ) {
			if ( (string) $email_id === $made['email'] ) {
				self::remove_folder( $dir );
			}
		}
	}

	/**
	 * Hooked on wp_mail_succeeded / wp_mail_failed: the folders of the files
	 * that mail carried go (only files this class wrote).
	 *
	 * @param array|WP_Error $mail The mail's data, or the failure carrying it.
	 */
	public static function on_mail_done( $mail ) {
		$data  = is_wp_error( $mail ) ? $mail->get_error_data() : $mail;
		$files = is_array( $data ) && isset( $data['attachments'] ) ? (array) $data['attachments'] : array();
		foreach ( self::$temporary as $dir => $made ) {
			if ( array_intersect( $made['files'], $files ) ) {
				self::remove_folder( $dir );
			}
		}
	}

	/** Removes every attachments' folder left (hooked on shutdown). */
	public static function remove_temporary() {
		foreach ( array_keys( self::$temporary ) as $dir ) {
			self::remove_folder( $dir );
		}
	}

	/**
	 * Removes one of this request's attachments folders and its files.
	 *
	 * @param string $dir The folder (a key of self::$temporary).
	 */
	private static function remove_folder( $dir ) {
		if ( ! isset( self::$temporary[ $dir ] ) ) {
			return;
		}
		foreach ( self::$temporary[ $dir ]['files'] as $file ) {
			wp_delete_file( $file );
		}
		@rmdir( $dir ); // phpcs:ignore WordPress.PHP.NoSilencedErrors.Discouraged,WordPress.WP.AlternativeFunctions.file_system_operations_rmdir -- its own folder, empty now.
		unset( self::$temporary[ $dir ] );
	}
}
