<?php
/**
 * WP Overnight's "PDF Invoices & Packing Slips for WooCommerce": its invoice
 * carries the order's Counterfoil number and its credit note (a document of
 * its Professional extension) the refund's, through the filters it offers
 * an external numbering authority — per document slug
 * (`woocommerce_{slug}_number_by_plugin`,
 * `wpo_wcpdf_external_{slug}_number_enabled`,
 * `wpo_wcpdf_external_{slug}_number`; slugs `invoice` and `credit_note`),
 * and before its 2.0.6 `woocommerce_generate_invoice_number`.
 *
 * Invariants:
 * - the invoice's number is the order's invoice number, allocated by
 *   whichever comes first, the payment or the shop making the PDF (the same
 *   key: never twice); a credit note's is the credit note Counterfoil
 *   issued for that refund (`_counterfoil_credit_note_number`), never one of
 *   WP Overnight's own;
 * - the number is given as issued, whatever its format: as WP Overnight's
 *   `DocumentNumber` with its formatted number set (taken as it is; a
 *   numeric answer would be re-formatted with WP Overnight's stored prefix,
 *   suffix and padding, which its screen hides), its plain number the
 *   series' sequence; where that class is missing (an old version), as the
 *   string;
 * - WP Overnight makes no invoice or credit note of Counterfoil's without
 *   its number: where none can be had it is refused
 *   (`wpo_wcpdf_document_is_allowed`: an order whose number is pending, a
 *   refund without a credit note), and a document it made while the number
 *   failed (its initiate_number() catches every exception, and would still
 *   render and attach it) is not handed out (`wcpdf_get_document`); it is
 *   never left to number one from its own store (a second authority);
 * - deciding whether a document is allowed never allocates a number (its
 *   order lists ask for every order);
 * - its invoice and credit-note numbers and dates are not edited on the
 *   order screen while Counterfoil numbers: its `enable_document_data_editing`
 *   setting reads as off (which both its form and what it takes from a post
 *   obey);
 * - one invoice document per e-mail: when WP Overnight attached its PDF
 *   invoice (or credit note) to a customer e-mail, Counterfoil's own PDF of
 *   that document is taken off the e-mail and its UBL (the e-invoice) stays;
 *   when WP Overnight also attached its XML (its own e-invoice), Counterfoil's
 *   UBL goes too. WP Overnight's document wins because the shop chose it and
 *   set it to attach; both carry the same number. Nothing is taken off an
 *   e-mail WP Overnight attached nothing to;
 * - other documents (packing slips) are left alone; the older filter
 *   `woocommerce_generate_invoice_number` (its invoices before 2.0.6, and
 *   code that still asks it) answers with the order's number as a string.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

// phpcs:disable WordPress.Security.EscapeOutput.ExceptionNotEscaped -- the messages are thrown to WP Overnight's PDF plugin, which logs them and prints them through wp_kses_post(); escaped here, its log would hold entities.

/**
 * The PDF plugin's invoice and credit-note numbers.
 */
final class Counterfoil_WooCommerce_Pdf {
	/** WP Overnight's number object (since its 4.x; earlier, the second name). */
	const NUMBER_CLASSES = array( '\WPO\IPS\Documents\DocumentNumber', '\WPO\WC\PDF_Invoices\Documents\Document_Number' );
	/** Its documents' base class. */
	const DOCUMENT_CLASS = '\WPO\IPS\Documents\OrderDocument';
	/** Its document types Counterfoil numbers. */
	const TYPES = array( 'invoice', 'credit-note' );

	/**
	 * @var array What WP Overnight attached to the e-mail being made:
	 *            array( document type, output format ) pairs.
	 */
	private static $attached = array();

	/** Hooks (harmless when the PDF plugin is not active: nobody applies them). */
	public static function init() {
		add_filter( 'woocommerce_invoice_number_by_plugin', '__return_true' );
		add_filter( 'woocommerce_credit_note_number_by_plugin', '__return_true' );
		add_filter( 'wpo_wcpdf_external_invoice_number_enabled', array( __CLASS__, 'enabled' ), 10, 2 );
		add_filter( 'wpo_wcpdf_external_credit_note_number_enabled', array( __CLASS__, 'enabled' ), 10, 2 );
		add_filter( 'woocommerce_generate_invoice_number', array( __CLASS__, 'for_order' ), 10, 2 );
		add_filter( 'wpo_wcpdf_external_invoice_number', array( __CLASS__, 'for_document' ), 10, 2 );
		add_filter( 'wpo_wcpdf_external_credit_note_number', array( __CLASS__, 'for_document' ), 10, 2 );
		add_filter( 'wpo_wcpdf_document_is_allowed', array( __CLASS__, 'is_allowed' ), 20, 2 );
		add_filter( 'wcpdf_get_document', array( __CLASS__, 'made' ), 10, 4 );
		add_filter( 'option_wpo_wcpdf_settings_debug', array( __CLASS__, 'not_editable' ) );
		// Around WP Overnight's attachments (priority 99): what it attached, then one invoice document.
		add_filter( 'woocommerce_email_attachments', array( __CLASS__, 'before_attachments' ), 98, 1 );
		add_action( 'wpo_wcpdf_email_attachment', array( __CLASS__, 'on_attached' ), 10, 4 );
		add_filter( 'woocommerce_email_attachments', array( __CLASS__, 'one_invoice_document' ), 100, 2 );
	}

	/** The document's type ('invoice', 'packing-slip', 'credit-note', …). */
	private static function type_of( $document ) {
		if ( is_object( $document ) && is_callable( array( $document, 'get_type' ) ) ) {
			return (string) $document->get_type();
		}
		return is_object( $document ) && isset( $document->type ) ? (string) $document->type : '';
	}

	/** The document's order (a refund for a credit note), or null. */
	private static function order_of( $document ) {
		$order = is_object( $document ) && isset( $document->order ) ? $document->order : null;
		return is_object( $order ) && is_callable( array( $order, 'get_type' ) ) ? $order : null;
	}

	/**
	 * Whether the PDF plugin takes the number from us: for its invoices and
	 * credit notes.
	 *
	 * @param bool   $enabled  Earlier filters' answer.
	 * @param object $document The document.
	 * @return bool
	 */
	public static function enabled( $enabled, $document = null ) {
		return in_array( self::type_of( $document ), self::TYPES, true ) ? true : (bool) $enabled;
	}

	/**
	 * The number of a document: WP Overnight's number object, formatted as
	 * issued.
	 *
	 * @param mixed  $number   Earlier filters' number.
	 * @param object $document The document.
	 * @return mixed
	 * @throws RuntimeException When there is no number to give.
	 */
	public static function for_document( $number, $document = null ) {
		$type = self::type_of( $document );
		if ( ! in_array( $type, self::TYPES, true ) ) {
			return $number;
		}
		$order = self::order_of( $document );
		if ( 'credit-note' === $type ) {
			$ours = $order && 'shop_order_refund' === $order->get_type() ? (string) $order->get_meta( Counterfoil_WooCommerce::META_CREDIT_NOTE, true ) : '';
			if ( '' === $ours ) {
				/* translators: %d: refund id */
				throw new RuntimeException( sprintf( __( 'Counterfoil issued no credit note for refund %d.', 'counterfoil' ), $order ? (int) $order->get_id() : 0 ) );
			}
			$post = (int) $order->get_meta( Counterfoil_WooCommerce::META_CREDIT_NOTE_POST, true );
		} else {
			$ours = self::for_order( null, $order );
			if ( null === $ours ) {
				return $number;
			}
			$post = $order && Counterfoil_WooCommerce::number_of( $order ) === $ours ? (int) $order->get_meta( Counterfoil_WooCommerce::META_POST, true ) : 0;
		}
		return self::document_number( (string) $ours, $post, $document, $order );
	}

	/**
	 * A number as WP Overnight takes it as it is: its number object with the
	 * formatted number set (its plain number the invoice's sequence), else
	 * the string.
	 *
	 * @param string $formatted The number as issued.
	 * @param int    $post      Its invoice or credit-note post (0: unknown).
	 * @param object $document  The document.
	 * @param object $order     Its order or refund.
	 * @return object|string
	 */
	private static function document_number( $formatted, $post, $document, $order ) {
		$sequence = $post ? (int) get_post_meta( $post, '_counterfoil_number', true ) : 0;
		$parts    = array(
			'number'           => $sequence > 0 ? $sequence : null,
			'formatted_number' => $formatted,
			'prefix'           => '',
			'suffix'           => '',
			'padding'          => null,
			'document_type'    => self::type_of( $document ),
			'order_id'         => $order ? (int) $order->get_id() : null,
		);
		$typed    = class_exists( self::DOCUMENT_CLASS ) && is_a( $document, ltrim( self::DOCUMENT_CLASS, '\\' ) );
		foreach ( self::NUMBER_CLASSES as $class ) {
			if ( class_exists( $class ) ) {
				return new $class( $parts, array(), $typed ? $document : null, $typed ? $order : null );
			}
		}
		return $formatted;
	}

	/**
	 * The invoice number of an order (numbering it now if the payment has
	 * not yet), or a refund's credit-note number.
	 *
	 * @param mixed    $number Earlier filters' number.
	 * @param WC_Order $order  The order (or refund).
	 * @return string|null
	 * @throws RuntimeException When the order cannot be numbered now.
	 */
	public static function for_order( $number, $order = null ) {
		if ( ! is_object( $order ) || ! is_callable( array( $order, 'get_type' ) ) ) {
			return $number;
		}
		if ( 'shop_order_refund' === $order->get_type() ) {
			$credit = (string) $order->get_meta( Counterfoil_WooCommerce::META_CREDIT_NOTE, true );
			return '' === $credit ? $number : $credit;
		}
		$known = Counterfoil_WooCommerce::number_of( $order );
		if ( '' !== $known ) {
			return $known;
		}
		$result = Counterfoil_WooCommerce::number_order( $order, true );
		if ( is_array( $result ) ) {
			return (string) $result['number'];
		}
		$why = is_wp_error( $result ) ? $result->get_error_message() : __( 'this order is not one Counterfoil numbers.', 'counterfoil' );
		/* translators: 1: order id, 2: the reason */
		throw new RuntimeException( sprintf( __( 'Counterfoil has no invoice number for order %1$d yet: %2$s', 'counterfoil' ), (int) $order->get_id(), $why ) );
	}

	/**
	 * Hooked on wpo_wcpdf_document_is_allowed: a document of ours not made
	 * yet is refused when no number can be had for it — the order's is
	 * pending (its numbering failed; the retry mends it), the refund has no
	 * credit note. Allocates nothing: an order not numbered yet is allowed
	 * (making its invoice numbers it).
	 *
	 * @param bool   $allowed  Earlier filters' answer.
	 * @param object $document The document.
	 * @return bool
	 */
	public static function is_allowed( $allowed, $document = null ) {
		$type  = self::type_of( $document );
		$order = self::order_of( $document );
		if ( ! $allowed || ! $order || ! in_array( $type, self::TYPES, true ) || self::has_number( $document ) ) {
			return (bool) $allowed;
		}
		if ( 'credit-note' === $type ) {
			return 'shop_order_refund' === $order->get_type() && '' !== (string) $order->get_meta( Counterfoil_WooCommerce::META_CREDIT_NOTE, true );
		}
		if ( 'shop_order' !== $order->get_type() || '' !== Counterfoil_WooCommerce::number_of( $order ) ) {
			return true;
		}
		return '' === (string) $order->get_meta( Counterfoil_WooCommerce::META_PENDING, true );
	}

	/** Whether the document has its number already (made before). */
	private static function has_number( $document ) {
		$number = is_callable( array( $document, 'get_number' ) ) ? $document->get_number() : null;
		if ( is_object( $number ) && is_callable( array( $number, 'get_formatted' ) ) ) {
			$number = $number->get_formatted();
		}
		return is_scalar( $number ) && '' !== (string) $number;
	}

	/**
	 * Hooked on wcpdf_get_document: a document of ours made now (`$init`)
	 * that came out without a number (the number failed inside
	 * WP Overnight, which caught it) is not handed out — no PDF, no
	 * attachment.
	 *
	 * @param mixed  $document      The document, or false.
	 * @param string $document_type Its type.
	 * @param mixed  $order         The order(s) asked for.
	 * @param bool   $init          Whether it was to be made.
	 * @return mixed
	 */
	public static function made( $document, $document_type = '', $order = null, $init = false ) {
		if ( ! $init || ! is_object( $document ) || ! in_array( self::type_of( $document ), self::TYPES, true ) || ! self::order_of( $document ) ) {
			return $document;
		}
		return self::has_number( $document ) ? $document : false;
	}

	/**
	 * Hooked on option_wpo_wcpdf_settings_debug: its document data editing
	 * reads as off (its invoice's and credit note's number and date are
	 * Counterfoil's).
	 *
	 * @param mixed $settings The option.
	 * @return mixed
	 */
	public static function not_editable( $settings ) {
		if ( is_array( $settings ) ) {
			unset( $settings['enable_document_data_editing'] );
		}
		return $settings;
	}

	/**
	 * Hooked on woocommerce_email_attachments before WP Overnight's: a new
	 * e-mail, nothing attached by it yet.
	 *
	 * @param array $attachments Files.
	 * @return array
	 */
	public static function before_attachments( $attachments ) {
		self::$attached = array();
		return $attachments;
	}

	/**
	 * Hooked on wpo_wcpdf_email_attachment: WP Overnight attached a document.
	 *
	 * @param string $file          The file.
	 * @param string $document_type Its type.
	 * @param object $document      The document.
	 * @param string $output_format pdf or xml.
	 */
	public static function on_attached( $file, $document_type = '', $document = null, $output_format = 'pdf' ) {
		self::$attached[] = array( (string) $document_type, (string) $output_format );
	}

	/**
	 * Hooked on woocommerce_email_attachments after WP Overnight's: when it
	 * attached the e-mail's invoice document (its invoice on an order
	 * e-mail, its credit note on a refund e-mail), Counterfoil's own copy of
	 * that kind goes (its PDF; its UBL too when WP Overnight attached its XML).
	 *
	 * @param array  $attachments Files.
	 * @param string $email_id    The e-mail.
	 * @return array
	 */
	public static function one_invoice_document( $attachments, $email_id = '' ) {
		$attached       = self::$attached;
		self::$attached = array();
		$type           = in_array( $email_id, Counterfoil_WooCommerce_Documents::REFUND_EMAILS, true ) ? 'credit-note' : 'invoice';
		$drop           = array();
		foreach ( $attached as $pair ) {
			if ( $type === $pair[0] ) {
				$drop[] = 'xml' === $pair[1] ? Counterfoil_Documents::FORMATS['ubl'][1] : Counterfoil_Documents::FORMATS['pdf'][1];
			}
		}
		if ( ! $drop || ! is_array( $attachments ) ) {
			return $attachments;
		}
		$ours = trailingslashit( untrailingslashit( get_temp_dir() ) ) . Counterfoil_WooCommerce_Documents::MAIL_DIR_PREFIX;
		$kept = array();
		foreach ( $attachments as $key => $file ) {
			$counterfoils = is_string( $file ) && 0 === strpos( $file, $ours );
			$dropped      = false;
			foreach ( $drop as $ending ) {
				$dropped = $dropped || ( $counterfoils && substr( $file, -strlen( $ending ) ) === $ending );
			}
			if ( ! $dropped ) {
				$kept[ $key ] = $file;
			}
		}
		// The files dropped stay in Counterfoil's private folder, removed once the e-mail is sent.
		return array_values( $kept );
	}
}
