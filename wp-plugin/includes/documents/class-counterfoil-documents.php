<?php
/**
 * An invoice's or a credit note's e-invoice: its EN 16931 document input
 * built from the post, the seller's settings and what the site supplies,
 * written as UBL or CII (Counterfoil_Einvoice, held to the core's bytes).
 *
 * Invariants:
 * - the number (BT-1) is the post's title as issued, the issue date (BT-2)
 *   the post's local date, the amount and currency the payment's as
 *   recorded; a credit note names its invoice's number and date
 *   (BT-25, BT-26); the payment's transaction id is the sales order
 *   reference (BT-14) of a payment our webhook recorded, never a buyer's
 *   reference (BT-10) and never a payment provider's (Stripe's) id;
 * - the seller is the settings' (`counterfoil_seller`), then the filter
 *   `counterfoil_seller( array $seller, int $issuer )`; the buyer and the
 *   lines are what the payment carried (our webhook's `buyer` and `lines`,
 *   kept once per payment in {prefix}counterfoil_details; a credit note
 *   takes its invoice's buyer), then the filter `counterfoil_document_input(
 *   array $input, WP_Post $post )`; a payment that carries no lines gets one
 *   line for its amount under the seller's default VAT category, which must
 *   then not be the standard rate: a standard-rated sale needs its lines;
 * - an invoice's input is frozen the first time a valid document is made
 *   of it — at issue when the site has what it needs, else at the first
 *   download (the bytes handed out are the ones every later download and
 *   the export give, so they are kept before they leave; the download is
 *   an explicit, nonce'd request) — never by a page that only looks
 *   (can_make(): the invoice's screen, My Account's order view), which
 *   writes nothing — in {prefix}counterfoil_documents: from then on every
 *   document of it is made from that input, so a later change of the
 *   seller's settings or of a filter changes no issued invoice, and the
 *   CLI's export writes the same bytes from the same row; when two
 *   requests freeze it at once, the row that won is the input of both, and
 *   when the input cannot be kept (the insert failed) no document is made
 *   (a WP_Error, status 503);
 * - what a valid document needs and the site lacks is a WP_Error naming the
 *   business term (status 422), never an invalid file, and so is a document
 *   whose total with VAT is not the amount the payment recorded (it says
 *   "paid");
 * - the UBL and CII files are the pure-PHP twin's (the same bytes as the
 *   core's); the Factur-X PDF is the core's, through the extension's
 *   Counterfoil\einvoice_document() from the same input — without the
 *   extension it is a WP_Error (501) saying how to get it, and the screens
 *   say so instead of offering it;
 * - a download needs the books' capability (Counterfoil_Admin::CAPABILITY:
 *   an issued invoice is edited by nobody) and the link's nonce.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * E-invoice documents of the plugin's posts.
 */
final class Counterfoil_Documents {
	/** The seller's details (the party shape of docs/einvoice.md) and VAT defaults. */
	const SELLER_OPTION = 'counterfoil_seller';
	/** The sellers of other issuers (a marketplace's vendors): issuer id => the seller's details. */
	const SELLERS_OPTION = 'counterfoil_sellers';
	/** 1: a partial refund of a mixed-rate invoice is split pro rata over its rates (else refused, naming BG-25). */
	const PRO_RATA_OPTION = 'counterfoil_credit_note_pro_rata';
	/** The admin-post action of a download. */
	const ACTION = 'counterfoil_document';
	/** The formats written: their media type and file name ending. */
	const FORMATS = array(
		'ubl' => array( 'application/xml; charset=utf-8', '-ubl.xml' ),
		'cii' => array( 'application/xml; charset=utf-8', '-cii.xml' ),
		'pdf' => array( 'application/pdf', '.pdf' ),
	);
	/** The extension's function that writes the core's documents. */
	const EXTENSION_FUNCTION = 'Counterfoil\\einvoice_document';

	/** Hooks. */
	public static function init() {
		add_action( 'admin_post_' . self::ACTION, array( __CLASS__, 'handle_download' ) );
		add_filter( 'post_row_actions', array( __CLASS__, 'row_actions' ), 20, 2 );
	}

	/** Hooks of every request: an invoice's input frozen at issue. */
	public static function init_always() {
		add_action( 'counterfoil_invoice_created', array( __CLASS__, 'freeze_at_issue' ), 20 );
		add_action( 'counterfoil_credit_note_created', array( __CLASS__, 'freeze_at_issue' ), 20 );
	}

	/**
	 * @var int[]|null While holding_freeze() runs: the posts it issued,
	 * whose freeze at issue its caller does moments later.
	 */
	private static $held = null;

	/**
	 * Runs $work with the freeze at issue of the posts it issues held back,
	 * for a caller that makes their documents moments later in the same
	 * request (WooCommerce's e-mails of the paid order): the first valid
	 * document made freezes the input, so the caller freezes (with
	 * freeze_at_issue()) only the held posts no document was made of — once,
	 * not twice.
	 *
	 * @param callable $work What issues.
	 * @return array What $work returned, and the held posts' ids.
	 */
	public static function holding_freeze( callable $work ) {
		$outer      = self::$held;
		self::$held = array();
		try {
			$result = $work();
			$held   = self::$held;
		} finally {
			self::$held = $outer;
		}
		return array( $result, $held );
	}

	/**
	 * Freezes a new invoice's or credit note's input when a valid document
	 * can be made of it now (else it is frozen at its first download);
	 * within holding_freeze(), only notes the post for its caller.
	 *
	 * @param WP_Post|int $post The new post.
	 */
	public static function freeze_at_issue( $post ) {
		$post = get_post( $post );
		if ( ! $post || ! Counterfoil_Invoice_Type::is_ours( $post->post_type ) ) {
			return;
		}
		if ( null !== self::$held ) {
			self::$held[] = (int) $post->ID;
			return;
		}
		try {
			self::checked_input( $post );
		} catch ( Throwable $e ) {
			// The payment is answered whatever happens here: frozen at the first download instead.
			Counterfoil_Log::once( 'document-freeze:' . get_class( $e ), 'an e-invoice input was not frozen at issue: ' . $e->getMessage() );
		}
	}

	/**
	 * The frozen input of a post, or null.
	 *
	 * @param int       $post_id Post.
	 * @param wpdb|null $db      The connection to read on (default $wpdb).
	 * @return array|null
	 */
	private static function frozen( $post_id, $db = null ) {
		global $wpdb;
		$db   = $db ? $db : $wpdb;
		$t    = Counterfoil_Schema::tables();
		$json = $db->get_var( $db->prepare( "SELECT input FROM {$t['documents']} WHERE post_id = %d", $post_id ) ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- table name from the prefix.
		$in   = null === $json ? null : json_decode( $json, true );
		return is_array( $in ) ? $in : null;
	}

	/**
	 * Whether a valid document can be made of a post now — the frozen
	 * input's, or one built now — without writing anything (a built input
	 * is not frozen here: a page that only shows the invoice must not).
	 *
	 * @param int|WP_Post $invoice Invoice or credit note.
	 * @return true|WP_Error Why not (status in its data).
	 */
	public static function can_make( $invoice ) {
		$post = get_post( $invoice );
		if ( ! $post || ! Counterfoil_Invoice_Type::is_ours( $post->post_type ) ) {
			return new WP_Error( 'counterfoil_document_not_found', __( 'No invoice or credit note of this site.', 'counterfoil' ), array( 'status' => 404 ) );
		}
		$checked = self::checked_input( $post, false );
		return is_wp_error( $checked ) ? $checked : true;
	}

	/**
	 * A post's input, checked: the frozen one, or one built now that makes
	 * a valid document whose total is what was paid (then frozen, when
	 * $keep).
	 *
	 * @param WP_Post $post Invoice or credit note.
	 * @param bool    $keep Whether a built input is frozen (false: nothing is written).
	 * @return array|WP_Error input and doc (Counterfoil_Einvoice::document()), or why not.
	 */
	private static function checked_input( WP_Post $post, $keep = true ) {
		$frozen = self::frozen( $post->ID );
		$input  = null === $frozen ? self::input_for( $post ) : $frozen;
		try {
			$doc = Counterfoil_Einvoice::document( $input );
		} catch ( Counterfoil_Einvoice_Refusal $e ) {
			$why = $e->getMessage();
			if ( 'BG-25' === $e->term && Counterfoil_Invoice_Type::CREDIT_NOTE_TYPE === $post->post_type ) {
				$why = __( 'BG-25: the credit note states no lines, and none can be derived from its invoice without stating a VAT treatment the shop did not apply: a partial refund of an invoice with several VAT rates names its own lines (the filter counterfoil_document_input).', 'counterfoil' );
			}
			return new WP_Error(
				'counterfoil_document_refused',
				/* translators: %s: what is missing, naming the EN 16931 business term */
				sprintf( __( 'No valid e-invoice can be made: %s', 'counterfoil' ), $why ),
				array(
					'status' => 422,
					'term'   => $e->term,
				)
			);
		}
		// A paid document states what was paid: its amount payable is the
		// payment's. A difference of at most a minor unit per line is the
		// shop's own rounding of VAT per line: the rounding amount (BT-114).
		$amount = (string) get_post_meta( $post->ID, '_counterfoil_amount', true );
		if ( '' !== $amount ) {
			$payable = function ( $doc ) {
				$t = $doc['totals'];
				return Counterfoil_Einvoice::str( null === $t['rounding'] ? $t['with_vat'] : Counterfoil_Einvoice::add( $t['with_vat'], $t['rounding'] ) );
			};
			try {
				$diff = Counterfoil_Rules::minor_units( $amount, $doc['currency'] ) - Counterfoil_Rules::minor_units( $payable( $doc ), $doc['currency'] );
			} catch ( InvalidArgumentException $e ) {
				$diff = null;
			}
			if ( null === $frozen && null !== $diff && 0 !== $diff && ! isset( $input['rounding'] ) && abs( $diff ) <= count( $doc['lines'] ) ) {
				$input['rounding'] = Counterfoil_Einvoice::str( array( $diff, $doc['places'] ) );
				try {
					$doc  = Counterfoil_Einvoice::document( $input );
					$diff = 0;
				} catch ( Counterfoil_Einvoice_Refusal $e ) {
					unset( $input['rounding'] );
				}
			}
			if ( 0 !== $diff ) {
				return new WP_Error(
					'counterfoil_document_refused',
					/* translators: 1: the document's total, 2: the amount paid, 3: currency */
					sprintf( __( 'No valid e-invoice can be made: BT-112: its lines total %1$s %3$s with VAT, but %2$s %3$s was paid.', 'counterfoil' ), $payable( $doc ), $amount, $doc['currency'] ),
					array(
						'status' => 422,
						'term'   => 'BT-112',
					)
				);
			}
		}
		if ( null === $frozen ) {
			$converted = self::with_accounting_currency( $input, $doc, $post );
			if ( is_wp_error( $converted ) ) {
				return $converted;
			}
			list( $input, $doc ) = $converted;
			if ( ! $keep ) {
				return array(
					'input' => $input,
					'doc'   => $doc,
				);
			}
			$t = Counterfoil_Schema::tables();
			// On the node that holds the numbers (a node list: never a
			// second node of a cluster); the winner of a race read there too.
			try {
				list( $inserted, $won, $error ) = Counterfoil_Wpdb_Transaction::on_books_node(
					function ( $db ) use ( $t, $post, $input ) {
						$inserted = $db->query(
							$db->prepare(
								"INSERT IGNORE INTO {$t['documents']} (post_id, number, kind, issue_date, input, created_at) VALUES (%d, %s, %s, %s, %s, UTC_TIMESTAMP())", // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- table name from the prefix.
								$post->ID,
								(string) $input['number'],
								(string) $input['kind'],
								(string) $input['issue_date'],
								wp_json_encode( $input )
							)
						);
						$error = $db->last_error;
						// Two first downloads at once: the row that won is the
						// input (read again only when this insert did not write it).
						return array( $inserted, 1 === $inserted ? null : self::frozen( $post->ID, $db ), $error );
					}
				);
			} catch ( RuntimeException $e ) {
				list( $inserted, $won, $error ) = array( false, null, $e->getMessage() );
			}
			if ( 1 !== $inserted ) {
				if ( null === $won ) {
					// The insert failed and nothing is kept: a document made
					// now could differ from the next one, so none is made.
					Counterfoil_Log::once( 'document-unfrozen', 'an e-invoice input could not be kept in the documents table: ' . $error );
					return new WP_Error(
						'counterfoil_document_unfrozen',
						__( 'The e-invoice cannot be made now: its input could not be kept in the documents table, and every e-invoice of an invoice is made from the input kept. Try again later; the site\'s error log names the database error.', 'counterfoil' ),
						array( 'status' => 503 )
					);
				}
				if ( $won !== $input ) {
					return self::checked_input( $post );
				}
			}
		}
		return array(
			'input' => $input,
			'doc'   => $doc,
		);
	}

	/**
	 * The VAT in the seller's accounting currency (BT-6, BT-111), when it
	 * invoices in another: the document's total VAT at the exchange rate the
	 * filter `counterfoil_exchange_rate` gives, rounded to 2 decimals; none
	 * to give is a refusal naming BT-111, never a document without it.
	 *
	 * @param array   $input The input.
	 * @param array   $doc   Its document (Counterfoil_Einvoice::document()).
	 * @param WP_Post $post  The invoice or credit note.
	 * @return array|WP_Error [input, doc], or why not.
	 */
	private static function with_accounting_currency( array $input, array $doc, WP_Post $post ) {
		$seller     = isset( $input['seller'] ) && is_array( $input['seller'] ) ? $input['seller'] : array();
		$accounting = strtoupper( trim( isset( $seller['accounting_currency'] ) ? (string) $seller['accounting_currency'] : '' ) );
		if ( '' === $accounting || $accounting === $doc['currency'] ) {
			return array( $input, $doc );
		}
		/**
		 * The exchange rate of a document's currency to the seller's VAT
		 * accounting currency on its issue date (a decimal string such as
		 * "0.9123"), or null when not known.
		 *
		 * @param string|null $rate       Null.
		 * @param string      $currency   The document's currency.
		 * @param string      $accounting The seller's accounting currency.
		 * @param WP_Post     $post       The invoice or credit note.
		 */
		$rate = apply_filters( 'counterfoil_exchange_rate', null, $doc['currency'], $accounting, $post );
		$rate = is_string( $rate ) ? Counterfoil_Einvoice::dec( $rate ) : null;
		if ( null === $rate || $rate[0] <= 0 ) {
			return new WP_Error(
				'counterfoil_document_refused',
				/* translators: 1: the accounting currency, 2: the document's currency */
				sprintf( __( 'No valid e-invoice can be made: BT-111: the VAT in your accounting currency %1$s needs the exchange rate from %2$s, which the filter counterfoil_exchange_rate gives.', 'counterfoil' ), $accounting, $doc['currency'] ),
				array(
					'status' => 422,
					'term'   => 'BT-111',
				)
			);
		}
		$product                      = Counterfoil_Einvoice::mul( $doc['totals']['vat'], $rate );
		$vat                          = Counterfoil_Einvoice::round( $product, 2 );
		$vat                          = null === $vat ? array( -1, 0 ) : $vat; // Too large: refused below, naming BT-111.
		$input['tax_currency']        = $accounting;
		$input['vat_in_tax_currency'] = Counterfoil_Einvoice::str( $vat );
		try {
			return array( $input, Counterfoil_Einvoice::document( $input ) );
		} catch ( Counterfoil_Einvoice_Refusal $e ) {
			return new WP_Error(
				'counterfoil_document_refused',
				/* translators: %s: what is missing, naming the EN 16931 business term */
				sprintf( __( 'No valid e-invoice can be made: %s', 'counterfoil' ), $e->getMessage() ),
				array(
					'status' => 422,
					'term'   => $e->term,
				)
			);
		}
	}

	/**
	 * Whether this site can write the Factur-X PDF (the extension is loaded).
	 *
	 * @return bool
	 */
	public static function pdf_available() {
		return function_exists( self::EXTENSION_FUNCTION );
	}

	/** Why this site offers no PDF, and how to get it. */
	public static function pdf_unavailable_message() {
		return __( 'The Factur-X PDF is written by the counterfoil PHP extension, which this site does not load: install it (see the plugin\'s readme, "The PHP extension") and the PDF appears here. The UBL and CII files need nothing more.', 'counterfoil' );
	}

	/**
	 * The seller of an issuer's documents.
	 *
	 * @param int $issuer Issuer (user id; 0 the shop).
	 * @return array
	 */
	public static function seller( $issuer ) {
		$sellers = get_option( self::SELLERS_OPTION, array() );
		$seller  = is_array( $sellers ) && isset( $sellers[ (int) $issuer ] ) && is_array( $sellers[ (int) $issuer ] )
			? $sellers[ (int) $issuer ]
			: get_option( self::SELLER_OPTION, array() );
		/**
		 * The seller of an issuer's e-invoices (a marketplace's vendor).
		 *
		 * @param array $seller The settings' seller of this issuer, else the default seller.
		 * @param int   $issuer The issuer.
		 */
		$seller = apply_filters( 'counterfoil_seller', is_array( $seller ) ? $seller : array(), (int) $issuer );
		return is_array( $seller ) ? $seller : array();
	}

	/**
	 * The document input of a post (invoice or credit note).
	 *
	 * @param WP_Post $post Post.
	 * @return array
	 */
	public static function input_for( WP_Post $post ) {
		$credit = Counterfoil_Invoice_Type::CREDIT_NOTE_TYPE === $post->post_type;
		$scope  = (string) get_post_meta( $post->ID, '_counterfoil_scope_key', true );
		$issuer = Counterfoil_Invoices::issuer_of( $scope );
		$seller = self::seller( null !== $issuer && ctype_digit( $issuer ) ? (int) $issuer : (int) $post->post_author );
		$amount = (string) get_post_meta( $post->ID, '_counterfoil_amount', true );
		$input  = array(
			'kind'            => $credit ? 'credit_note' : 'invoice',
			'number'          => $post->post_title,
			'issue_date'      => get_the_date( 'Y-m-d', $post ),
			'currency'        => (string) get_post_meta( $post->ID, '_counterfoil_currency', true ),
			'paid'            => true,
			'language'        => determine_locale(),
			'seller'          => $seller,
			'buyer'           => array(),
			'lines'           => array(),
		);
		if ( '' !== $amount && isset( $seller['default_vat_category'] ) && 'S' !== $seller['default_vat_category'] ) {
			$input['lines'][] = array(
				'name'         => sprintf( /* translators: %s: the invoice number */ __( 'Payment %s', 'counterfoil' ), $post->post_title ),
				'quantity'     => '1',
				'unit_price'   => $amount,
				'vat_rate'     => '0',
				'vat_category' => (string) $seller['default_vat_category'],
			) + ( empty( $seller['default_vat_exemption'] ) ? array() : array( 'vat_exemption_reason' => (string) $seller['default_vat_exemption'] ) );
		}
		// What the payment carried (a credit note: its invoice's buyer).
		$invoice = $credit ? get_post( (int) get_post_meta( $post->ID, '_counterfoil_refers_to', true ) ) : $post;
		if ( $invoice ) {
			$details = self::details_for( (string) get_post_meta( $invoice->ID, '_counterfoil_gateway', true ), (string) get_post_meta( $invoice->ID, '_counterfoil_transaction_id', true ) );
			if ( is_array( $details['buyer'] ) ) {
				$input['buyer'] = array_diff_key( $details['buyer'], array_flip( self::BUYER_REFERENCES ) );
				$input          = array_merge( $input, array_intersect_key( $details['buyer'], array_flip( self::BUYER_REFERENCES ) ) );
			}
			if ( ! $credit && is_array( $details['lines'] ) ) {
				$input['lines'] = $details['lines'];
			}
			if ( $credit ) {
				// The refund's own lines when it carried them, else derived
				// from its invoice's.
				$own     = self::details_for( (string) get_post_meta( $post->ID, '_counterfoil_gateway', true ), self::refund_key( (string) get_post_meta( $post->ID, '_counterfoil_transaction_id', true ) ) );
				$derived = is_array( $own['lines'] ) && $own['lines'] ? $own['lines'] : self::credit_note_lines( $invoice, $amount, $input['currency'] );
				if ( null !== $derived ) {
					$input['lines'] = $derived;
				}
			}
		}
		// The shop's own id of a payment our webhook or the admin recorded
		// is its sales order (BT-14); a payment provider's id (Stripe's) is
		// no reference of the buyer's or the seller's (its integration says
		// so through the filter), and none is the buyer's reference (BT-10),
		// which only the buyer gives.
		if ( $invoice ) {
			/**
			 * The sales order reference (BT-14) of a document: the payment's
			 * transaction id, unless the gateway's integration knows better
			 * ('' for none: a payment provider's own id is no order of the
			 * shop's).
			 *
			 * @param string  $reference The payment's transaction id.
			 * @param string  $gateway   The payment's gateway.
			 * @param WP_Post $invoice   The invoice (a credit note's: the one it corrects).
			 */
			$reference = (string) apply_filters( 'counterfoil_document_sales_order_reference', (string) get_post_meta( $invoice->ID, '_counterfoil_transaction_id', true ), (string) get_post_meta( $invoice->ID, '_counterfoil_gateway', true ), $invoice );
			if ( '' !== $reference ) {
				$input['sales_order_reference'] = $reference;
			}
		}
		$labels = self::pdf_labels();
		if ( $labels ) {
			$input['labels'] = $labels;
		}
		if ( $credit && $invoice ) {
			$input['preceding']      = $invoice->post_title;
			$input['preceding_date'] = get_the_date( 'Y-m-d', $invoice );
		} elseif ( $credit && '' !== (string) get_post_meta( $post->ID, '_counterfoil_refers_to_number', true ) ) {
			// An adopted invoice: as the plugin that issued it stated it.
			$input['preceding'] = (string) get_post_meta( $post->ID, '_counterfoil_refers_to_number', true );
			$date               = (string) get_post_meta( $post->ID, '_counterfoil_refers_to_date', true );
			if ( preg_match( '/^\d{4}-\d{2}-\d{2}$/', $date ) ) {
				$input['preceding_date'] = $date;
			}
		}
		/**
		 * The document input of an invoice or credit note: add the buyer
		 * and the lines (the party and line shapes of docs/einvoice.md).
		 *
		 * @param array   $input The input built from the post and the settings.
		 * @param WP_Post $post  The invoice or credit note.
		 */
		$input = apply_filters( 'counterfoil_document_input', $input, $post );
		return is_array( $input ) ? $input : array();
	}

	/**
	 * The PDF's labels in the site's language: each key of the core's table
	 * (tests/vectors/pdf_labels.json, held to it by VectorsTest) with its
	 * English text and this site's translation of it (keep every {name}
	 * placeholder: the core ignores a translation that drops one).
	 *
	 * @return array key => [English, translated].
	 */
	public static function pdf_label_texts() {
		/* translators: the Factur-X PDF's labels; keep each {placeholder} as it is. */
		return array(
			'invoice_title' => array( 'INVOICE', _x( 'INVOICE', 'PDF label: invoice_title', 'counterfoil' ) ),
			'credit_note_title' => array( 'CREDIT NOTE', _x( 'CREDIT NOTE', 'PDF label: credit_note_title', 'counterfoil' ) ),
			'invoice' => array( 'Invoice', _x( 'Invoice', 'PDF label: invoice', 'counterfoil' ) ),
			'credit_note' => array( 'Credit note', _x( 'Credit note', 'PDF label: credit_note', 'counterfoil' ) ),
			'issued' => array( 'Issued {date}', _x( 'Issued {date}', 'PDF label: issued', 'counterfoil' ) ),
			'issued_credit_note' => array( 'Issued {date}', _x( 'Issued {date}', 'PDF label: issued_credit_note', 'counterfoil' ) ),
			'due' => array( 'Due {date}', _x( 'Due {date}', 'PDF label: due', 'counterfoil' ) ),
			'paid_stamp' => array( 'PAID', _x( 'PAID', 'PDF label: paid_stamp', 'counterfoil' ) ),
			'settled_stamp' => array( 'SETTLED', _x( 'SETTLED', 'PDF label: settled_stamp', 'counterfoil' ) ),
			'corrects' => array( 'Corrects invoice {number}', _x( 'Corrects invoice {number}', 'PDF label: corrects', 'counterfoil' ) ),
			'corrects_of' => array( 'Corrects invoice {number} of {date}', _x( 'Corrects invoice {number} of {date}', 'PDF label: corrects_of', 'counterfoil' ) ),
			'continued' => array( '{document} {number} (continued)', _x( '{document} {number} (continued)', 'PDF label: continued', 'counterfoil' ) ),
			'from' => array( 'From', _x( 'From', 'PDF label: from', 'counterfoil' ) ),
			'bill_to' => array( 'Bill to', _x( 'Bill to', 'PDF label: bill_to', 'counterfoil' ) ),
			'deliver_to' => array( 'Deliver to', _x( 'Deliver to', 'PDF label: deliver_to', 'counterfoil' ) ),
			'vat_id' => array( 'VAT ID {id}', _x( 'VAT ID {id}', 'PDF label: vat_id', 'counterfoil' ) ),
			'registration' => array( 'Registration {id}', _x( 'Registration {id}', 'PDF label: registration', 'counterfoil' ) ),
			'tax_number' => array( 'Tax number {id}', _x( 'Tax number {id}', 'PDF label: tax_number', 'counterfoil' ) ),
			'your_reference' => array( 'Your reference', _x( 'Your reference', 'PDF label: your_reference', 'counterfoil' ) ),
			'purchase_order' => array( 'Purchase order', _x( 'Purchase order', 'PDF label: purchase_order', 'counterfoil' ) ),
			'sales_order' => array( 'Order number', _x( 'Order number', 'PDF label: sales_order', 'counterfoil' ) ),
			'delivery_date' => array( 'Delivery date', _x( 'Delivery date', 'PDF label: delivery_date', 'counterfoil' ) ),
			'period' => array( 'Invoicing period', _x( 'Invoicing period', 'PDF label: period', 'counterfoil' ) ),
			'period_range' => array( '{start} – {end}', _x( '{start} – {end}', 'PDF label: period_range', 'counterfoil' ) ),
			'period_from' => array( 'from {start}', _x( 'from {start}', 'PDF label: period_from', 'counterfoil' ) ),
			'period_until' => array( 'until {end}', _x( 'until {end}', 'PDF label: period_until', 'counterfoil' ) ),
			'description' => array( 'Description', _x( 'Description', 'PDF label: description', 'counterfoil' ) ),
			'quantity' => array( 'Quantity', _x( 'Quantity', 'PDF label: quantity', 'counterfoil' ) ),
			'unit_price' => array( 'Unit price', _x( 'Unit price', 'PDF label: unit_price', 'counterfoil' ) ),
			'vat' => array( 'VAT', _x( 'VAT', 'PDF label: vat', 'counterfoil' ) ),
			'amount' => array( 'Amount', _x( 'Amount', 'PDF label: amount', 'counterfoil' ) ),
			'sku' => array( 'SKU {sku}', _x( 'SKU {sku}', 'PDF label: sku', 'counterfoil' ) ),
			'gtin' => array( 'GTIN {gtin}', _x( 'GTIN {gtin}', 'PDF label: gtin', 'counterfoil' ) ),
			'vat_breakdown' => array( 'VAT breakdown', _x( 'VAT breakdown', 'PDF label: vat_breakdown', 'counterfoil' ) ),
			'taxable_amount' => array( 'Taxable amount', _x( 'Taxable amount', 'PDF label: taxable_amount', 'counterfoil' ) ),
			'category_s' => array( 'Standard rate', _x( 'Standard rate', 'PDF label: category_s', 'counterfoil' ) ),
			'category_z' => array( 'Zero rated', _x( 'Zero rated', 'PDF label: category_z', 'counterfoil' ) ),
			'category_e' => array( 'Exempt from VAT', _x( 'Exempt from VAT', 'PDF label: category_e', 'counterfoil' ) ),
			'category_ae' => array( 'Reverse charge', _x( 'Reverse charge', 'PDF label: category_ae', 'counterfoil' ) ),
			'category_k' => array( 'Intra-community supply', _x( 'Intra-community supply', 'PDF label: category_k', 'counterfoil' ) ),
			'category_g' => array( 'Export outside the EU', _x( 'Export outside the EU', 'PDF label: category_g', 'counterfoil' ) ),
			'category_o' => array( 'Not subject to VAT', _x( 'Not subject to VAT', 'PDF label: category_o', 'counterfoil' ) ),
			'lines_total' => array( 'Total of the lines', _x( 'Total of the lines', 'PDF label: lines_total', 'counterfoil' ) ),
			'allowance' => array( 'Allowance: {reason}', _x( 'Allowance: {reason}', 'PDF label: allowance', 'counterfoil' ) ),
			'charge' => array( 'Charge: {reason}', _x( 'Charge: {reason}', 'PDF label: charge', 'counterfoil' ) ),
			'total_without_vat' => array( 'Total without VAT', _x( 'Total without VAT', 'PDF label: total_without_vat', 'counterfoil' ) ),
			'total_vat' => array( 'VAT', _x( 'VAT', 'PDF label: total_vat', 'counterfoil' ) ),
			'total' => array( 'Total', _x( 'Total', 'PDF label: total', 'counterfoil' ) ),
			'vat_in_currency' => array( 'VAT in {currency}', _x( 'VAT in {currency}', 'PDF label: vat_in_currency', 'counterfoil' ) ),
			'rounding' => array( 'Rounding', _x( 'Rounding', 'PDF label: rounding', 'counterfoil' ) ),
			'paid' => array( 'Paid', _x( 'Paid', 'PDF label: paid', 'counterfoil' ) ),
			'amount_due' => array( 'Amount due', _x( 'Amount due', 'PDF label: amount_due', 'counterfoil' ) ),
			'refunded' => array( 'Refunded', _x( 'Refunded', 'PDF label: refunded', 'counterfoil' ) ),
			'to_refund' => array( 'To be refunded', _x( 'To be refunded', 'PDF label: to_refund', 'counterfoil' ) ),
			'by_card' => array( 'by card', _x( 'by card', 'PDF label: by_card', 'counterfoil' ) ),
			'by_cash' => array( 'in cash', _x( 'in cash', 'PDF label: by_cash', 'counterfoil' ) ),
			'by_cheque' => array( 'by cheque', _x( 'by cheque', 'PDF label: by_cheque', 'counterfoil' ) ),
			'by_transfer' => array( 'by credit transfer', _x( 'by credit transfer', 'PDF label: by_transfer', 'counterfoil' ) ),
			'by_debit' => array( 'by direct debit (mandate {mandate})', _x( 'by direct debit (mandate {mandate})', 'PDF label: by_debit', 'counterfoil' ) ),
			'by_online' => array( 'through an online payment service', _x( 'through an online payment service', 'PDF label: by_online', 'counterfoil' ) ),
			'by_agreement' => array( 'as agreed', _x( 'as agreed', 'PDF label: by_agreement', 'counterfoil' ) ),
			'by_code' => array( 'by payment means {code}', _x( 'by payment means {code}', 'PDF label: by_code', 'counterfoil' ) ),
			'pay_transfer' => array( 'Please pay {amount} to IBAN {iban}, quoting {reference}.', _x( 'Please pay {amount} to IBAN {iban}, quoting {reference}.', 'PDF label: pay_transfer', 'counterfoil' ) ),
			'pay_debit' => array( '{amount} will be collected by direct debit under mandate {mandate}.', _x( '{amount} will be collected by direct debit under mandate {mandate}.', 'PDF label: pay_debit', 'counterfoil' ) ),
			'pay_by' => array( 'Please pay {amount} {by}.', _x( 'Please pay {amount} {by}.', 'PDF label: pay_by', 'counterfoil' ) ),
			'pay_due' => array( 'Amount due: {amount}.', _x( 'Amount due: {amount}.', 'PDF label: pay_due', 'counterfoil' ) ),
			'paid_in_full' => array( 'Paid in full: nothing is due.', _x( 'Paid in full: nothing is due.', 'PDF label: paid_in_full', 'counterfoil' ) ),
			'paid_in_full_by' => array( 'Paid in full {by}: nothing is due.', _x( 'Paid in full {by}: nothing is due.', 'PDF label: paid_in_full_by', 'counterfoil' ) ),
			'nothing_due' => array( 'Nothing is due.', _x( 'Nothing is due.', 'PDF label: nothing_due', 'counterfoil' ) ),
			'due_by' => array( 'Due by {date}.', _x( 'Due by {date}.', 'PDF label: due_by', 'counterfoil' ) ),
			'terms' => array( 'Terms: {terms}', _x( 'Terms: {terms}', 'PDF label: terms', 'counterfoil' ) ),
			'settled' => array( 'Settled in full: nothing is due.', _x( 'Settled in full: nothing is due.', 'PDF label: settled', 'counterfoil' ) ),
			'settled_by' => array( 'Refunded {by}: nothing is due.', _x( 'Refunded {by}: nothing is due.', 'PDF label: settled_by', 'counterfoil' ) ),
			'refund' => array( 'We will refund you {amount}.', _x( 'We will refund you {amount}.', 'PDF label: refund', 'counterfoil' ) ),
			'refund_by' => array( 'We will refund you {amount} {by}.', _x( 'We will refund you {amount} {by}.', 'PDF label: refund_by', 'counterfoil' ) ),
			'notes' => array( 'Notes', _x( 'Notes', 'PDF label: notes', 'counterfoil' ) ),
			'page' => array( 'Page {n} of {total}', _x( 'Page {n} of {total}', 'PDF label: page', 'counterfoil' ) ),
			'footer' => array( 'This PDF/A-3 file carries its EN 16931 e-invoice as factur-x.xml (Factur-X 1.0, profile EN 16931).', _x( 'This PDF/A-3 file carries its EN 16931 e-invoice as factur-x.xml (Factur-X 1.0, profile EN 16931).', 'PDF label: footer', 'counterfoil' ) ),
			'decimal_separator' => array( '.', _x( '.', 'PDF label: decimal_separator', 'counterfoil' ) ),
			'date' => array( '{yyyy}-{mm}-{dd}', _x( '{yyyy}-{mm}-{dd}', 'PDF label: date', 'counterfoil' ) ),
		);
	}

	/**
	 * The labels a document input carries: the site's translations that
	 * differ from the English text (the core has English, German, French
	 * and Dutch of its own; a translation of the plugin wins).
	 *
	 * @return array key => text.
	 */
	public static function pdf_labels() {
		$labels = array();
		foreach ( self::pdf_label_texts() as $key => $texts ) {
			if ( $texts[1] !== $texts[0] ) {
				$labels[ $key ] = $texts[1];
			}
		}
		return $labels;
	}

	/**
	 * The lines of a credit note that names none, from its invoice's lines,
	 * stating the VAT the invoice charged: a refund of the whole amount
	 * repeats the invoice's lines; a partial refund of an invoice at one
	 * rate is one line at that rate, its net price the refund less that
	 * VAT (a cent of difference is the rounding amount, as for any payment).
	 * A partial refund of an invoice at several rates gets no lines (the
	 * document is refused naming BG-25: the refund must state its own), and
	 * an invoice without lines leaves the seller's default line as it was.
	 *
	 * @param WP_Post $invoice  The invoice refunded.
	 * @param string  $amount   The refund's amount (with VAT).
	 * @param string  $currency Its currency.
	 * @return array|null The lines, an empty array when none can be stated,
	 *                    or null when the invoice has no lines of its own.
	 */
	private static function credit_note_lines( WP_Post $invoice, $amount, $currency ) {
		$kept  = self::frozen( $invoice->ID );
		$lines = null !== $kept && isset( $kept['lines'] ) && is_array( $kept['lines'] ) && $kept['lines'] ? $kept['lines'] : null;
		if ( null === $lines ) {
			$details = self::details_for( (string) get_post_meta( $invoice->ID, '_counterfoil_gateway', true ), (string) get_post_meta( $invoice->ID, '_counterfoil_transaction_id', true ) );
			$lines   = is_array( $details['lines'] ) && $details['lines'] ? $details['lines'] : null;
		}
		if ( null === $lines ) {
			return null;
		}
		$paid  = Counterfoil_Einvoice::dec( (string) get_post_meta( $invoice->ID, '_counterfoil_amount', true ) );
		$gross = Counterfoil_Einvoice::dec( (string) $amount );
		if ( null === $gross ) {
			return array();
		}
		if ( null !== $paid && 0 === Counterfoil_Einvoice::cmp( $paid, $gross ) ) {
			return $lines; // The whole invoice refunded: its own lines.
		}
		$rates = array();
		foreach ( $lines as $line ) {
			$rates[ ( isset( $line['vat_category'] ) ? $line['vat_category'] : '' ) . '/' . ( isset( $line['vat_rate'] ) ? $line['vat_rate'] : '' ) ] = $line;
		}
		if ( count( $rates ) > 1 ) {
			return get_option( self::PRO_RATA_OPTION ) ? self::pro_rata_lines( $invoice, $kept, $gross, $currency ) : array();
		}
		$rate = 1 === count( $rates ) ? Counterfoil_Einvoice::dec( (string) reset( $rates )['vat_rate'] ) : null;
		// Within what the integers below hold exactly (a refund up to ten
		// thousand million, four decimals of amount or rate).
		if ( null === $rate || $gross[0] <= 0 || $rate[0] < 0 || $gross[0] > 10 ** 14 || $gross[1] > 4 || $rate[1] > 4 ) {
			return array();
		}
		// net = gross × 100 / (100 + rate), half away from zero, in the
		// document's places, in integers: gross = g / 10^a, rate = m / 10^b.
		$places = in_array( strtoupper( $currency ), Counterfoil_Rules::ZERO_DECIMAL, true ) ? 0 : 2;
		$one    = reset( $rates );
		$num    = $gross[0] * 100 * ( 10 ** $rate[1] ) * ( 10 ** $places );
		$den    = ( 100 * ( 10 ** $rate[1] ) + $rate[0] ) * ( 10 ** $gross[1] );
		$net    = intdiv( 2 * $num + $den, 2 * $den );
		return array(
			array(
				/* translators: %s: the number of the invoice refunded */
				'name'         => sprintf( __( 'Refund of invoice %s', 'counterfoil' ), $invoice->post_title ),
				'quantity'     => '1',
				'unit_price'   => Counterfoil_Einvoice::str( array( $net, $places ) ),
				'vat_rate'     => (string) $one['vat_rate'],
				'vat_category' => (string) $one['vat_category'],
			),
		);
	}

	/**
	 * A partial refund of a mixed-rate invoice split pro rata, when the shop
	 * opted in (PRO_RATA_OPTION): each of the invoice's VAT categories and
	 * rates gets the share of the refund its amount with VAT has of the
	 * invoice's (in minor units, half away from zero, the last share the
	 * rest, so the shares add up to the refund), stated as one line at that
	 * rate, its net the share less that VAT. Made from the invoice's kept
	 * input only (its computed VAT breakdown); none (refused naming BG-25)
	 * without it, or beyond what the integers hold exactly.
	 *
	 * @param WP_Post    $invoice  The invoice refunded.
	 * @param array|null $kept     Its frozen input.
	 * @param array      $gross    The refund with VAT (a decimal pair).
	 * @param string     $currency Its currency.
	 * @return array The lines, or none.
	 */
	private static function pro_rata_lines( WP_Post $invoice, $kept, array $gross, $currency ) {
		if ( null === $kept ) {
			return array();
		}
		try {
			$doc = Counterfoil_Einvoice::document( $kept );
		} catch ( Counterfoil_Einvoice_Refusal $e ) {
			return array();
		}
		$places = $doc['places'];
		$minor  = function ( $d ) use ( $places ) {
			$r = Counterfoil_Einvoice::round( $d, $places );
			return null === $r ? null : $r[0];
		};
		$refund = $minor( $gross );
		$total  = $minor( $doc['totals']['with_vat'] );
		if ( null === $refund || null === $total || $refund <= 0 || $total <= 0 || $refund > $total || $total > 10 ** 9 ) {
			return array();
		}
		$lines = array();
		$left  = $refund;
		$last  = count( $doc['breakdown'] ) - 1;
		foreach ( $doc['breakdown'] as $i => $b ) {
			$part  = $minor( Counterfoil_Einvoice::add( $b['base'], $b['tax'] ) );
			$share = $i === $last ? $left : intdiv( 2 * $refund * $part + $total, 2 * $total );
			$left -= $share;
			$rate  = $b['rate'];
			if ( $share <= 0 || $rate[1] > 4 ) {
				continue;
			}
			// net = share × 100 / (100 + rate), half away from zero.
			$den     = 100 * ( 10 ** $rate[1] ) + $rate[0];
			$net     = intdiv( 2 * $share * 100 * ( 10 ** $rate[1] ) + $den, 2 * $den );
			$lines[] = array(
				/* translators: 1: the number of the invoice refunded, 2: the VAT rate */
				'name'         => sprintf( __( 'Refund of invoice %1$s (VAT %2$s %%)', 'counterfoil' ), $invoice->post_title, Counterfoil_Einvoice::trimmed( $rate ) ),
				'quantity'     => '1',
				'unit_price'   => Counterfoil_Einvoice::str( array( $net, $places ) ),
				'vat_rate'     => Counterfoil_Einvoice::trimmed( $rate ),
				'vat_category' => $b['category'],
			) + array_filter(
				array(
					'vat_exemption_code'   => $b['exemption_code'],
					'vat_exemption_reason' => in_array( $b['category'], array( 'S', 'Z' ), true ) ? null : $b['exemption_reason'],
				)
			);
		}
		return $lines;
	}

	/**
	 * The document of an invoice or credit note in a format.
	 *
	 * @param int|WP_Post $invoice Post or id.
	 * @param string      $format  `ubl`, `cii` or `pdf`.
	 * @return string|WP_Error The bytes, or why not (status in its data).
	 */
	public static function document( $invoice, $format ) {
		$post = get_post( $invoice );
		if ( ! $post || ! Counterfoil_Invoice_Type::is_ours( $post->post_type ) ) {
			return new WP_Error( 'counterfoil_document_not_found', __( 'No invoice or credit note of this site.', 'counterfoil' ), array( 'status' => 404 ) );
		}
		if ( 'pdf' === $format && ! self::pdf_available() ) {
			return new WP_Error( 'counterfoil_document_format', self::pdf_unavailable_message(), array( 'status' => 501 ) );
		}
		if ( ! isset( self::FORMATS[ $format ] ) ) {
			return new WP_Error( 'counterfoil_document_format', __( 'The format is ubl, cii or pdf.', 'counterfoil' ), array( 'status' => 400 ) );
		}
		$checked = self::checked_input( $post );
		if ( is_wp_error( $checked ) ) {
			return $checked;
		}
		$input = $checked['input'];
		$doc   = $checked['doc'];
		if ( 'pdf' === $format ) {
			try {
				return call_user_func( self::EXTENSION_FUNCTION, wp_json_encode( $input ), 'pdf' );
			} catch ( Throwable $e ) {
				// The twin made the document; the core refusing it is a defect
				// of one of them. A panic in the core reaches PHP as an Error
				// (ext-php-rs catches it; the release build unwinds): the
				// request answers 500, the worker lives on.
				Counterfoil_Log::once( 'document-pdf-failed', 'the Factur-X PDF could not be made: ' . $e->getMessage() );
				return new WP_Error( 'counterfoil_document_refused', $e->getMessage(), array( 'status' => 500 ) );
			}
		}
		return 'ubl' === $format ? Counterfoil_Einvoice::ubl( $doc ) : Counterfoil_Einvoice::cii( $doc );
	}

	/**
	 * The download URL of a post's document.
	 *
	 * @param int    $post_id Post.
	 * @param string $format  Format.
	 * @return string
	 */
	public static function url( $post_id, $format ) {
		return wp_nonce_url(
			add_query_arg(
				array(
					'action'  => self::ACTION,
					'invoice' => (int) $post_id,
					'format'  => $format,
				),
				admin_url( 'admin-post.php' )
			),
			self::ACTION . '_' . (int) $post_id
		);
	}

	/** The list's row actions: the documents. */
	public static function row_actions( $actions, $post ) {
		if ( ! Counterfoil_Invoice_Type::is_ours( $post->post_type ) || ! current_user_can( Counterfoil_Admin::CAPABILITY ) ) {
			return $actions;
		}
		foreach ( array_keys( self::FORMATS ) as $format ) {
			if ( 'pdf' === $format && ! self::pdf_available() ) {
				$actions['counterfoil_pdf'] = '<span class="counterfoil-no-pdf" title="' . esc_attr( self::pdf_unavailable_message() ) . '">' . esc_html__( 'PDF: needs the extension', 'counterfoil' ) . '</span>';
				continue;
			}
			$actions[ 'counterfoil_' . $format ] = '<a href="' . esc_url( self::url( $post->ID, $format ) ) . '">' . esc_html( strtoupper( $format ) ) . '</a>';
		}
		return $actions;
	}

	/** Sends a document (the books' capability, and the link's nonce). */
	public static function handle_download() {
		// phpcs:disable WordPress.Security.NonceVerification.Recommended -- checked by check_admin_referer below.
		$id     = isset( $_GET['invoice'] ) ? absint( $_GET['invoice'] ) : 0;
		$format = isset( $_GET['format'] ) ? sanitize_key( wp_unslash( $_GET['format'] ) ) : '';
		// phpcs:enable
		if ( ! $id || ! current_user_can( Counterfoil_Admin::CAPABILITY ) ) {
			wp_die( esc_html__( 'You are not allowed to download this document.', 'counterfoil' ), 403 );
		}
		check_admin_referer( self::ACTION . '_' . $id );
		$bytes = self::document( $id, $format );
		if ( is_wp_error( $bytes ) ) {
			$data = $bytes->get_error_data();
			wp_die( esc_html( $bytes->get_error_message() ), (int) ( is_array( $data ) && isset( $data['status'] ) ? $data['status'] : 400 ) );
		}
		self::send( $bytes, get_the_title( $id ), $format );
	}

	/**
	 * Sends a document's bytes as a download, and ends the request.
	 *
	 * @param string $bytes  The document.
	 * @param string $number Its number (the file's name).
	 * @param string $format Its format.
	 */
	public static function send( $bytes, $number, $format ) {
		nocache_headers();
		header( 'Content-Type: ' . self::FORMATS[ $format ][0] );
		header( 'Content-Disposition: attachment; filename="' . sanitize_file_name( $number ) . self::FORMATS[ $format ][1] . '"' );
		header( 'Content-Length: ' . strlen( $bytes ) );
		header( 'X-Content-Type-Options: nosniff' );
		echo $bytes; // phpcs:ignore WordPress.Security.EscapeOutput.OutputNotEscaped -- a document file, escaped by its writer.
		exit;
	}

	/** The keys of a party (the issue's shape). */
	const PARTY_KEYS = array( 'name', 'street', 'city', 'postcode', 'country', 'vat_id', 'legal_id', 'legal_id_scheme', 'email', 'electronic_address', 'electronic_address_scheme', 'buyer_reference', 'order_reference' );
	/** The buyer's own references a payment's buyer may carry (BT-10, BT-13): the document's, not the party's. */
	const BUYER_REFERENCES = array( 'buyer_reference', 'order_reference' );
	/** The most lines a payment may carry. */
	const MAX_LINES = 500;

	/**
	 * The buyer and the lines a payment delivery carries (optional `buyer`:
	 * the party shape; `lines`: name, quantity, unit_price, vat_rate as
	 * decimal strings, vat_category), checked; what a valid e-invoice needs
	 * besides is judged when the document is made.
	 *
	 * @param array $payment The delivery's body.
	 * @return array|WP_Error buyer (array|null), lines (array|null); or 400.
	 */
	public static function details_of( array $payment ) {
		$bad = function ( $message ) {
			return new WP_Error( 'counterfoil_invalid_payment', $message, array( 'status' => 400 ) );
		};
		$buyer = isset( $payment['buyer'] ) ? $payment['buyer'] : null;
		$lines = isset( $payment['lines'] ) ? $payment['lines'] : null;
		if ( null !== $buyer ) {
			if ( ! is_array( $buyer ) ) {
				return $bad( __( 'The field buyer must be an object (name, street, city, postcode, country, vat_id, legal_id, email, electronic_address, electronic_address_scheme).', 'counterfoil' ) );
			}
			foreach ( $buyer as $key => $value ) {
				if ( ! in_array( $key, self::PARTY_KEYS, true ) || ! is_string( $value ) || strlen( $value ) > 255 ) {
					/* translators: %s: the field */
					return $bad( sprintf( __( 'The buyer\'s field %s is not one of its fields, or not a string of at most 255 characters.', 'counterfoil' ), (string) $key ) );
				}
			}
		}
		if ( null !== $lines ) {
			if ( ! is_array( $lines ) || array_values( $lines ) !== $lines || count( $lines ) > self::MAX_LINES ) {
				/* translators: %d: the most lines */
				return $bad( sprintf( __( 'The field lines must be a list of at most %d lines.', 'counterfoil' ), self::MAX_LINES ) );
			}
			foreach ( $lines as $i => $line ) {
				$ok = is_array( $line ) && isset( $line['name'] ) && is_string( $line['name'] ) && strlen( $line['name'] ) <= 255
					&& in_array( isset( $line['vat_category'] ) ? $line['vat_category'] : null, Counterfoil_Einvoice::CATEGORIES, true );
				foreach ( array( 'quantity', 'unit_price', 'vat_rate' ) as $key ) {
					$ok = $ok && null !== Counterfoil_Einvoice::dec( isset( $line[ $key ] ) ? $line[ $key ] : null );
				}
				if ( ! $ok ) {
					/* translators: %d: the line's position, from 1 */
					return $bad( sprintf( __( 'Line %d needs a name, quantity, unit_price and vat_rate as decimal strings such as "19.99", and a vat_category (S, Z, E, AE, K, G, O).', 'counterfoil' ), $i + 1 ) );
				}
			}
		}
		return array(
			'buyer' => $buyer,
			'lines' => $lines,
		);
	}

	/**
	 * Keeps what a payment carried for its e-invoice (the first delivery's).
	 *
	 * @param string $gateway        Gateway.
	 * @param string $transaction_id Transaction id.
	 * @param array  $details        From details_of().
	 */
	public static function remember_details( $gateway, $transaction_id, array $details ) {
		if ( null === $details['buyer'] && null === $details['lines'] ) {
			return;
		}
		$t = Counterfoil_Schema::tables();
		try {
			Counterfoil_Wpdb_Transaction::on_books_node(
				function ( $db ) use ( $t, $gateway, $transaction_id, $details ) {
					$db->query(
						$db->prepare(
							"INSERT IGNORE INTO {$t['details']} (gateway, transaction_id, buyer, line_items, created_at) VALUES (%s, %s, %s, %s, UTC_TIMESTAMP())", // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared -- table name from the prefix.
							$gateway,
							$transaction_id,
							null === $details['buyer'] ? null : wp_json_encode( $details['buyer'] ),
							null === $details['lines'] ? null : wp_json_encode( $details['lines'] )
						)
					);
				}
			);
		} catch ( RuntimeException $e ) {
			// As a failed insert: the e-invoice then names what is missing.
			Counterfoil_Log::once( 'details-not-kept', 'what a payment carried for its e-invoice could not be kept: ' . $e->getMessage() );
		}
	}

	/**
	 * The key a refund's own lines are kept under in the details table
	 * (beside the payments', whose ids are another gateway's namespace).
	 *
	 * @param string $refund_id The refund's id.
	 * @return string
	 */
	public static function refund_key( $refund_id ) {
		return 'refund:' . $refund_id;
	}

	/**
	 * What a payment carried for its e-invoice: buyer and lines, each null
	 * when it carried none.
	 */
	private static function details_for( $gateway, $transaction_id ) {
		global $wpdb;
		$t   = Counterfoil_Schema::tables();
		$row = $wpdb->get_row( $wpdb->prepare( "SELECT buyer, line_items FROM {$t['details']} WHERE gateway = %s AND transaction_id = %s", $gateway, $transaction_id ) ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared, WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- table name from the prefix; the plugin's own table, read once per document.
		return array(
			'buyer' => $row && null !== $row->buyer ? json_decode( $row->buyer, true ) : null,
			'lines' => $row && null !== $row->line_items ? json_decode( $row->line_items, true ) : null,
		);
	}

	/** The seller's fields on the settings form: name => label. */
	private static function seller_fields() {
		return array(
			'name'                      => __( 'Legal name (BT-27)', 'counterfoil' ),
			'street'                    => __( 'Street', 'counterfoil' ),
			'city'                      => __( 'City', 'counterfoil' ),
			'postcode'                  => __( 'Post code', 'counterfoil' ),
			'country'                   => __( 'Country (ISO code, such as BE)', 'counterfoil' ),
			'vat_id'                    => __( 'VAT identifier (BT-31)', 'counterfoil' ),
			'legal_id'                  => __( 'Legal registration (BT-30)', 'counterfoil' ),
			'legal_id_scheme'           => __( 'Its scheme (ISO 6523: 0002 SIREN, 0106 KvK, 0184 CVR, 0007 Swedish organisation number, …)', 'counterfoil' ),
			'tax_registration_id'       => __( 'Tax registration (BT-32), such as a small business\'s tax number without a VAT identifier', 'counterfoil' ),
			'email'                     => __( 'E-mail', 'counterfoil' ),
			'electronic_address'        => __( 'Electronic address (BT-34), such as a Peppol participant id', 'counterfoil' ),
			'electronic_address_scheme' => __( 'Its scheme (0208, 9925, EM, …)', 'counterfoil' ),
			'iban'                      => __( 'Bank account (IBAN)', 'counterfoil' ),
			'default_vat_category'      => __( 'VAT category of a payment without lines (E, O, Z, AE, K, G; empty: lines required)', 'counterfoil' ),
			'default_vat_exemption'     => __( 'Its exemption in your words (BT-120), such as "Small business: VAT not charged (art. 56bis)"', 'counterfoil' ),
			'accounting_currency'       => __( 'Your VAT accounting currency (BT-6), when you invoice in others (ISO code, such as EUR)', 'counterfoil' ),
			'payment_days'              => __( 'Days to pay an order not yet paid (due date BT-9; default 14)', 'counterfoil' ),
			'payment_terms'             => __( 'Payment terms of an order not yet paid (BT-20; default: payable within those days)', 'counterfoil' ),
		);
	}

	/** The settings page's seller part (inside the settings form). */
	public static function settings_fields() {
		// phpcs:ignore WordPress.Security.NonceVerification.Recommended -- which seller the read-only form shows.
		$issuer  = isset( $_GET['seller_issuer'] ) ? absint( $_GET['seller_issuer'] ) : 0;
		$sellers = get_option( self::SELLERS_OPTION, array() );
		$sellers = is_array( $sellers ) ? $sellers : array();
		$seller  = $issuer ? ( isset( $sellers[ $issuer ] ) ? $sellers[ $issuer ] : array() ) : get_option( self::SELLER_OPTION, array() );
		$seller  = is_array( $seller ) ? $seller : array();
		echo '<fieldset id="counterfoil-seller"><legend><strong>' . esc_html__( 'Seller on e-invoices', 'counterfoil' ) . '</strong></legend>';
		printf(
			'<p><label>%1$s <input type="text" inputmode="numeric" name="seller_issuer" value="%2$s"></label> <span class="description">%3$s</span></p>',
			esc_html__( 'Issuer (user id)', 'counterfoil' ),
			esc_attr( $issuer ? (string) $issuer : '' ),
			esc_html__( 'Empty: the seller of every issuer without one of its own. A user id: that issuer\'s seller (a marketplace\'s vendor); empty its fields to remove it.', 'counterfoil' )
		);
		if ( $sellers ) {
			echo '<p>' . esc_html__( 'Issuers with a seller of their own:', 'counterfoil' ) . ' ';
			foreach ( $sellers as $id => $one ) {
				printf(
					'<a href="%1$s">%2$s</a> ',
					esc_url( add_query_arg( 'seller_issuer', (int) $id, admin_url( 'options-general.php?page=' . Counterfoil_Admin::SLUG ) ) . '#counterfoil-seller' ),
					esc_html( sprintf( '%d: %s', (int) $id, isset( $one['name'] ) ? $one['name'] : '' ) )
				);
			}
			echo '</p>';
		}
		foreach ( self::seller_fields() as $key => $label ) {
			printf(
				'<p><label>%1$s <input type="text" class="regular-text" name="seller[%2$s]" value="%3$s"></label></p>',
				esc_html( $label ),
				esc_attr( $key ),
				esc_attr( isset( $seller[ $key ] ) ? (string) $seller[ $key ] : '' )
			);
		}
		printf(
			'<p><label><input type="checkbox" name="credit_note_pro_rata" value="1" %1$s> %2$s</label></p>',
			checked( (int) get_option( self::PRO_RATA_OPTION, 0 ), 1, false ),
			esc_html__( 'Split a partial refund of an invoice with several VAT rates pro rata over its rates (else its credit note needs the refund\'s own lines)', 'counterfoil' )
		);
		echo '</fieldset>';
	}

	/**
	 * Saves the seller part of the settings form.
	 *
	 * @return string|null Why nothing was saved, or null.
	 */
	public static function save_settings() {
		// phpcs:disable WordPress.Security.NonceVerification -- checked by the settings form's guard().
		if ( ! isset( $_POST['seller'] ) || ! is_array( $_POST['seller'] ) ) {
			return null;
		}
		$posted = map_deep( wp_unslash( $_POST['seller'] ), 'sanitize_text_field' ); // phpcs:ignore WordPress.Security.ValidatedSanitizedInput.InputNotSanitized -- sanitized by map_deep.
		update_option( self::PRO_RATA_OPTION, empty( $_POST['credit_note_pro_rata'] ) ? 0 : 1, false );
		// phpcs:enable
		$seller = array();
		foreach ( array_keys( self::seller_fields() ) as $key ) {
			$value = isset( $posted[ $key ] ) && is_string( $posted[ $key ] ) ? trim( $posted[ $key ] ) : '';
			if ( '' !== $value ) {
				$seller[ $key ] = $value;
			}
		}
		if ( isset( $seller['country'] ) ) {
			$seller['country'] = strtoupper( $seller['country'] );
			if ( ! preg_match( '/^[A-Z]{2}$/', $seller['country'] ) ) {
				return __( 'The seller was not saved: the country is a two-letter ISO code such as BE.', 'counterfoil' );
			}
		}
		if ( isset( $seller['payment_days'] ) && ( ! ctype_digit( $seller['payment_days'] ) || (int) $seller['payment_days'] > 366 ) ) {
			return __( 'The seller was not saved: the days to pay are a whole number from 0 to 366.', 'counterfoil' );
		}
		if ( isset( $seller['accounting_currency'] ) ) {
			$seller['accounting_currency'] = strtoupper( $seller['accounting_currency'] );
			if ( ! in_array( $seller['accounting_currency'], Counterfoil_Einvoice::CURRENCIES, true ) ) {
				return __( 'The seller was not saved: the accounting currency is an ISO 4217 code such as EUR.', 'counterfoil' );
			}
		}
		if ( isset( $seller['default_vat_exemption'] ) && ( ! isset( $seller['default_vat_category'] ) || in_array( $seller['default_vat_category'], array( 'S', 'Z' ), true ) ) ) {
			return __( 'The seller was not saved: an exemption text goes with an exempt default category (E, O, AE, K, G), not zero-rated.', 'counterfoil' );
		}
		if ( isset( $seller['default_vat_category'] ) && ! in_array( $seller['default_vat_category'], array( 'Z', 'E', 'AE', 'K', 'G', 'O' ), true ) ) {
			return __( 'The seller was not saved: the VAT category of a payment without lines is one of E, O, Z, AE, K, G (a standard-rated sale needs its lines).', 'counterfoil' );
		}
		// phpcs:ignore WordPress.Security.NonceVerification.Missing -- checked by the settings form's guard().
		$issuer = isset( $_POST['seller_issuer'] ) ? trim( sanitize_text_field( wp_unslash( $_POST['seller_issuer'] ) ) ) : '';
		if ( '' !== $issuer && ! ctype_digit( $issuer ) ) {
			return __( 'The seller was not saved: the issuer is a user id (digits), or empty for the default seller.', 'counterfoil' );
		}
		if ( '' === $issuer || 0 === (int) $issuer ) {
			update_option( self::SELLER_OPTION, $seller, false );
			return null;
		}
		$sellers = get_option( self::SELLERS_OPTION, array() );
		$sellers = is_array( $sellers ) ? $sellers : array();
		if ( $seller ) {
			$sellers[ (int) $issuer ] = $seller;
		} else {
			unset( $sellers[ (int) $issuer ] );
		}
		ksort( $sellers );
		update_option( self::SELLERS_OPTION, $sellers, false );
		return null;
	}
}
