<?php
/**
 * STAND-IN of WP Overnight's documents (its includes/Documents/): the
 * number object, the order document with its numbering path as the plugin
 * has it (5.16.1), the invoice and the number store.
 *
 * @package Counterfoil\Tests
 */

// phpcs:disable -- test code: a stand-in, not shipped.

namespace WPO\IPS\Documents;

defined( 'ABSPATH' ) || exit;

/** As the plugin's DocumentNumber (includes/Documents/DocumentNumber.php), whole. */
class DocumentNumber {
	public ?int $number;
	public string $formatted_number;
	public ?string $prefix;
	public ?string $suffix;
	public string $document_type;
	public ?int $order_id;
	public ?int $padding;

	public function __construct( $number, array $settings = array(), ?OrderDocument $document = null, ?\WC_Abstract_Order $order = null ) {
		$number = apply_filters( 'wpo_wcpdf_raw_document_number', $number, $settings, $document, $order );
		$data   = is_array( $number )
			? $number
			: ( ! empty( $number ) ? array_merge( array( 'number' => $number ), $settings ) : array() );
		$this->load_number_data( $data );
		if ( null !== $document ) {
			$this->document_type = $document->get_type();
		}
		if ( null !== $order ) {
			$this->order_id = $order->get_id();
		}
		if ( ! isset( $this->formatted_number ) && null !== $document ) {
			$this->apply_formatting( $document, $document->order ?? $order );
		}
	}

	public function load_number_data( array $data ): void {
		$numeric_properties = apply_filters( 'wpo_wcpdf_document_number_numeric_properties', array( 'number', 'order_id', 'padding' ), $this );
		foreach ( $data as $key => $value ) {
			if ( in_array( $key, $numeric_properties, true ) ) {
				$value = absint( $value );
				if ( $value === 0 ) {
					$value = null;
				}
			}
			$this->{$key} = $value;
		}
	}

	public function __toString(): string {
		return $this->get_formatted();
	}

	public function get_formatted(): string {
		$formatted_number = isset( $this->formatted_number ) ? $this->formatted_number : '';
		return apply_filters( 'wpo_wcpdf_formatted_document_number', $formatted_number, $this, $this->document_type, $this->order_id );
	}

	public function get_plain(): ?int {
		return $this->number ?? null;
	}

	public function get_prefix(): ?string {
		return $this->prefix ?? null;
	}

	public function get_suffix(): ?string {
		return $this->suffix ?? null;
	}

	public function get_padding(): ?int {
		return $this->padding ?? null;
	}

	public function apply_formatting( OrderDocument $document, \WC_Abstract_Order $order ): string {
		$formatted_number       = wpo_wcpdf_format_document_number( $this->get_plain(), $this->get_prefix(), $this->get_suffix(), $this->get_padding(), $document, $order );
		$this->formatted_number = apply_filters( 'wpo_wcpdf_format_document_number', $formatted_number, $this, $document, $order );
		return $this->formatted_number;
	}

	public function to_array(): array {
		return (array) $this;
	}
}

/**
 * As the plugin's OrderDocument: the order, the settings, the data
 * (date, number, notes, display_date) read from and saved to the order's
 * meta, and the numbering path.
 */
abstract class OrderDocument {
	public $type;
	public $slug;
	public $title;
	public $order;
	public $order_id;
	public $settings = array();
	public $enabled;
	public $output_formats = array();
	protected $data = array();

	public function __construct( $order = 0 ) {
		if ( is_numeric( $order ) && $order > 0 ) {
			$this->order_id = absint( $order );
			$this->order    = wc_get_order( $this->order_id );
		} elseif ( $order instanceof \WC_Order || is_subclass_of( $order, '\WC_Abstract_Order' ) ) {
			$this->order_id = $order->get_id();
			$this->order    = $order;
		}
		$this->slug           = ! empty( $this->type ) ? str_replace( '-', '_', $this->type ) : '';
		$this->output_formats = apply_filters( 'wpo_wcpdf_document_output_formats', array( 'pdf' ), $this );
		if ( $this->order ) {
			$this->read_data( $this->order );
		}
		$this->settings = $this->get_settings();
		$this->enabled  = $this->get_setting( 'enabled', false );
	}

	public function get_settings( $latest = false, $output_format = 'pdf' ) {
		return (array) WPO_WCPDF()->settings->get_document_settings( $this->get_type(), $output_format );
	}

	public function get_setting( $key, $default = '', $output_format = 'pdf' ) {
		return isset( $this->settings[ $key ] ) ? $this->settings[ $key ] : $default;
	}

	public function save_settings( $latest = false ) {
	}

	public function get_attach_to_email_ids( $output_format = 'pdf' ) {
		$settings = $this->get_settings( false, $output_format );
		return isset( $settings['attach_to_email_ids'] ) ? array_keys( array_filter( $settings['attach_to_email_ids'] ) ) : array();
	}

	public function get_type() {
		return $this->type;
	}

	public function get_title() {
		return apply_filters( 'wpo_wcpdf_document_title', $this->title, $this );
	}

	public function is_enabled( $output_format = 'pdf' ) {
		$is_enabled = $this->get_setting( 'enabled', false, $output_format );
		return apply_filters( 'wpo_wcpdf_document_is_enabled', $is_enabled, $this->type, $output_format );
	}

	/** As the plugin's initiate_number(): whatever the number's filters throw is caught and logged (its Semaphore is not here). */
	public function initiate_number( bool $force_new_number = false ) {
		$document_number = $force_new_number ? null : ( $this->exists() ? $this->get_data( 'number' ) : null );
		$document_number = apply_filters( 'wpo_wcpdf_initiate_number', $document_number, $this );
		if ( ! empty( $document_number ) ) {
			return $document_number;
		}
		try {
			$document_number = $this->get_document_number( true );
			if ( ! is_null( $document_number ) ) {
				$this->set_number( $document_number );
			}
		} catch ( \Exception | \Error $e ) {
			wcpdf_log_error( (string) $e, 'critical' );
		}
		return $document_number;
	}

	/** As the plugin's get_document_number(), line for line. */
	public function get_document_number( bool $generate = false ) {
		$document_number = null;
		if (
			apply_filters( "woocommerce_{$this->slug}_number_by_plugin", false ) ||
			apply_filters( "wpo_wcpdf_external_{$this->slug}_number_enabled", false, $this )
		) {
			$document_number = apply_filters( "woocommerce_generate_{$this->slug}_number", $document_number, $this->order );
			$document_number = apply_filters( "woocommerce_{$this->slug}_number", $document_number, $this->order->get_id() );
			$document_number = apply_filters( "wpo_wcpdf_external_{$this->slug}_number", $document_number, $this );
		} elseif (
			isset( $this->settings['display_number'] ) &&
			'order_number' === $this->settings['display_number'] &&
			! empty( $this->order )
		) {
			$document_number = $this->order->get_order_number();
		}

		if ( ! empty( $document_number ) ) {
			if ( ! is_numeric( $document_number ) && ! ( $document_number instanceof DocumentNumber ) ) {
				$formatted_number = $document_number;
				$number           = (int) preg_replace( '/\D/', '', $document_number );
				$document_number  = compact( 'number', 'formatted_number' );
			}
		} else {
			$number_store = $this->get_sequential_number_store();
			if ( $generate ) {
				$document_number = $number_store->increment( intval( $this->order_id ), $this->get_date()->format( 'Y-m-d H:i:s' ) );
			} else {
				$document_number = $number_store->get_next();
			}
		}
		return $document_number;
	}

	public function initiate_date(): void {
		if ( isset( $this->settings['display_date'] ) && 'order_date' === $this->settings['display_date'] && ! empty( $this->order ) ) {
			$this->set_date( $this->order->get_date_created() );
			$this->set_display_date( 'order_date' );
		} elseif ( empty( $this->get_date() ) ) {
			$this->set_date( time() );
			$this->set_display_date( 'document_date' );
		}
	}

	public function read_data( $order ) {
		$number = $order->get_meta( "_wcpdf_{$this->slug}_number_data" );
		if ( empty( $number ) ) {
			$number           = $order->get_meta( "_wcpdf_{$this->slug}_number" );
			$formatted_number = $order->get_meta( "_wcpdf_formatted_{$this->slug}_number" );
			if ( ! empty( $formatted_number ) ) {
				$number = compact( 'number', 'formatted_number' );
			}
		}
		$this->set_data(
			array(
				'date'         => $order->get_meta( "_wcpdf_{$this->slug}_date" ),
				'number'       => $number,
				'notes'        => $order->get_meta( "_wcpdf_{$this->slug}_notes" ),
				'display_date' => $order->get_meta( "_wcpdf_{$this->slug}_display_date" ),
			),
			$order
		);
	}

	public function init() {
		$this->set_date( time() );
		do_action( 'wpo_wcpdf_init_document', $this );
	}

	/** As the plugin's save(): the number as its formatted string and its data. */
	public function save( $order = null ) {
		$order = empty( $order ) ? $this->order : $order;
		if ( empty( $order ) ) {
			return;
		}
		foreach ( $this->data as $key => $value ) {
			if ( empty( $value ) ) {
				$order->delete_meta_data( "_wcpdf_{$this->slug}_{$key}" );
				if ( 'date' === $key ) {
					$order->delete_meta_data( "_wcpdf_{$this->slug}_{$key}_formatted" );
				} elseif ( 'number' === $key ) {
					$order->delete_meta_data( "_wcpdf_{$this->slug}_{$key}_data" );
					$order->delete_meta_data( "_wcpdf_{$this->slug}_settings" );
				}
			} elseif ( 'date' === $key ) {
				$order->update_meta_data( "_wcpdf_{$this->slug}_{$key}", $value->getTimestamp() );
				$order->update_meta_data( "_wcpdf_{$this->slug}_{$key}_formatted", $value->format( 'Y-m-d H:i:s' ) );
			} elseif ( 'number' === $key ) {
				$order->update_meta_data( "_wcpdf_{$this->slug}_{$key}", $value->formatted_number );
				$order->update_meta_data( "_wcpdf_{$this->slug}_{$key}_data", $value->to_array() );
			} else {
				$order->update_meta_data( "_wcpdf_{$this->slug}_{$key}", $value );
			}
		}
		$order->save_meta_data();
		do_action( 'wpo_wcpdf_save_document', $this, $order );
	}

	public function delete( $order = null ) {
		$order = empty( $order ) ? $this->order : $order;
		if ( empty( $order ) ) {
			return;
		}
		foreach ( array( 'settings', 'date', 'date_formatted', 'number', 'number_data', 'notes', 'printed', 'display_date', 'creation_trigger' ) as $data_key ) {
			$order->delete_meta_data( "_wcpdf_{$this->slug}_{$data_key}" );
		}
		$order->save_meta_data();
		do_action( 'wpo_wcpdf_delete_document', $this, $order );
	}

	/** As the plugin's is_allowed(): enabled, not for a disabled status (when it does not exist yet), then the filter. */
	public function is_allowed() {
		$allowed = true;
		if ( ! $this->is_enabled() ) {
			$allowed = false;
		} elseif ( ! $this->exists() && ! empty( $this->settings['disable_for_statuses'] ) && ! empty( $this->order ) && is_callable( array( $this->order, 'get_status' ) ) ) {
			$disabled = array_map(
				function ( $status ) {
					return 'wc-' === substr( $status, 0, 3 ) ? substr( $status, 3 ) : $status;
				},
				$this->settings['disable_for_statuses']
			);
			if ( in_array( $this->order->get_status(), $disabled, true ) ) {
				$allowed = false;
			}
		}
		return apply_filters( 'wpo_wcpdf_document_is_allowed', $allowed, $this );
	}

	public function exists() {
		return ! empty( $this->data['date'] );
	}

	public function get_hook_prefix() {
		return 'wpo_wcpdf_' . $this->slug . '_get_';
	}

	public function get_data( $key, $document_type = '', $order = null, $context = 'view' ) {
		$value = null;
		if ( array_key_exists( $key, $this->data ) ) {
			$value = $this->data[ $key ];
			if ( 'view' === $context ) {
				$value = apply_filters( $this->get_hook_prefix() . $key, $value, $this );
			}
		}
		return $value;
	}

	public function get_number( $document_type = '', $order = null, $context = 'view', $formatted = false ) {
		$number = $this->get_data( 'number', $document_type, $order, $context );
		if ( $number && $formatted ) {
			$number = $number->get_formatted();
		}
		return apply_filters( "wpo_wcpdf_{$this->slug}_number", $number, $document_type, $order, $context, $formatted, $this );
	}

	public function get_date( $document_type = '', $order = null, $context = 'view', $formatted = false ) {
		$date = $this->get_data( 'date', $document_type, $order, $context );
		if ( $date && $formatted ) {
			$date = $date->format( 'Y-m-d' );
		}
		return apply_filters( "wpo_wcpdf_{$this->slug}_date", $date, $document_type, $order, $context, $formatted, $this );
	}

	public function set_data( $data, $order ) {
		$order = empty( $order ) ? $this->order : $order;
		foreach ( $data as $key => $value ) {
			$setter = "set_$key";
			if ( is_callable( array( $this, $setter ) ) ) {
				$this->$setter( $value, $order );
			} else {
				$this->data[ $key ] = $value;
			}
		}
	}

	/** A timestamp, a date object or a local date string, kept in the site's time zone. */
	public function set_date( $value, $order = null ) {
		if ( empty( $value ) ) {
			$this->data['date'] = null;
			return;
		}
		if ( $value instanceof \DateTimeInterface ) {
			$timestamp = $value->getTimestamp();
		} elseif ( is_numeric( $value ) ) {
			$timestamp = (int) $value;
		} else {
			$timestamp = ( new \DateTime( (string) $value, wp_timezone() ) )->getTimestamp();
		}
		$datetime = new \WC_DateTime( "@{$timestamp}", new \DateTimeZone( 'UTC' ) );
		$datetime->setTimezone( wp_timezone() );
		$this->data['date'] = $datetime;
	}

	/** As the plugin's set_number(), whole. */
	public function set_number( $value, $order = null ) {
		$order = empty( $order ) ? $this->order : $order;
		if ( is_string( $value ) && is_serialized( $value ) ) {
			wcpdf_log_error( "Unexpected serialized string found for document number meta. Ignoring value. Meta value: {$value}" );
			$value = null;
		}
		if ( is_array( $value ) ) {
			$filtered_value = array_filter( $value );
		}
		if ( empty( $value ) || ( is_array( $value ) && empty( $filtered_value ) ) ) {
			$document_number = null;
		} elseif ( $value instanceof DocumentNumber ) {
			$document_number = $value;
		} else {
			$document_number = new DocumentNumber( $value, $this->get_number_settings(), $this, $order );
		}
		$this->data['number'] = $document_number;
	}

	public function set_notes( $value, $order = null ) {
		$this->data['notes'] = empty( $value ) ? null : $value;
	}

	public function set_display_date( $value, $order = null ) {
		$this->data['display_date'] = empty( $value ) ? null : $value;
	}

	/** As the plugin's: the `number_format` setting (prefix, suffix, padding), whether or not its screen shows it. */
	public function get_number_settings() {
		$number_settings = $this->get_setting( 'number_format', array() );
		return apply_filters( 'wpo_wcpdf_document_number_settings', $number_settings, $this );
	}

	/**
	 * As the plugin's: `{slug}_number`, or with a yearly reset the
	 * document's year's store (`{slug}_number_{year}` for a year other
	 * than the current one; the rotation of a lapsed year is not here).
	 */
	public function get_sequential_number_store() {
		$method = WPO_WCPDF()->settings->get_sequential_number_store_method();
		$name   = "{$this->slug}_number";
		if ( isset( $this->settings['reset_number_yearly'] ) ) {
			$date = $this->get_date() ? $this->get_date() : new \DateTime( 'now', wp_timezone() );
			$year = (int) wp_date( 'Y', $date->getTimestamp() );
			if ( (int) wp_date( 'Y' ) !== $year ) {
				$name = "{$name}_{$year}";
			}
		}
		return new SequentialNumberStore( apply_filters( "wpo_wcpdf_{$this->slug}_number_store_name", $name, "{$this->slug}_number", $this->get_date(), $method, $this ), $method );
	}

	/** The document's page (the plugin renders its template; here its title, number and date). */
	public function get_html( $args = array() ) {
		$number = $this->get_number( $this->get_type(), null, 'view', true );
		$date   = $this->get_date( $this->get_type(), null, 'view', true );
		$html   = '<html><body><h1>' . esc_html( $this->get_title() ) . '</h1>'
			. '<p class="' . esc_attr( $this->get_type() ) . '-number">Number: ' . esc_html( (string) $number ) . '</p>'
			. '<p class="' . esc_attr( $this->get_type() ) . '-date">Date: ' . esc_html( (string) $date ) . '</p></body></html>';
		return apply_filters( 'wpo_wcpdf_get_html', $html, $this );
	}

	/** A file starting as a PDF does, its text the page's (the plugin's dompdf is not here). */
	public function get_pdf() {
		do_action( 'wpo_wcpdf_before_pdf', $this->get_type(), $this );
		$pdf = "%PDF-1.4\n% WP Overnight STAND-IN\n" . wp_strip_all_tags( str_replace( '</p>', "\n", $this->get_html() ) ) . "\n%%EOF\n";
		do_action( 'wpo_wcpdf_after_pdf', $this->get_type(), $this );
		return apply_filters( 'wpo_wcpdf_get_pdf', $pdf, $this );
	}

	/** As the plugin's: `{type}-{order number}.pdf` (a refund's: its id). */
	public function get_filename( $context = 'download', $args = array() ) {
		if ( is_callable( array( $this->order, 'get_type' ) ) && 'shop_order_refund' === $this->order->get_type() ) {
			$suffix = $this->order_id;
		} else {
			$suffix = is_callable( array( $this->order, 'get_order_number' ) ) ? $this->order->get_order_number() : '';
		}
		$filename = $this->get_type() . '-' . $suffix . '.pdf';
		return sanitize_file_name( apply_filters( 'wpo_wcpdf_filename', $filename, $this->get_type(), array( $this->order_id ), $context, $args ) );
	}
}

/** As the plugin's OrderDocumentMethods: the refund helpers (the rest is its templates' data). */
abstract class OrderDocumentMethods extends OrderDocument {
	public function is_refund( $order ) {
		return 'shop_order_refund' === $order->get_type();
	}

	public function get_refund_parent_id( $order ) {
		return $order->get_parent_id();
	}

	public function get_refund_parent( $order ) {
		return $this->is_refund( $order ) ? wc_get_order( $this->get_refund_parent_id( $order ) ) : $order;
	}
}

/** As the plugin's Invoice: made with its date and number; it exists once it has a number. */
class Invoice extends OrderDocumentMethods {
	public function __construct( $order = 0 ) {
		$this->type  = 'invoice';
		$this->title = 'Invoice';
		parent::__construct( $order );
	}

	public function init() {
		$this->save_settings();
		$this->initiate_date();
		$this->initiate_number();
		do_action( 'wpo_wcpdf_init_document', $this );
	}

	public function exists() {
		return ! empty( $this->data['number'] );
	}

	/** As the plugin's: `invoice-{invoice number}.pdf` when it shows the invoice number, else the order number. */
	public function get_filename( $context = 'download', $args = array() ) {
		$suffix = isset( $this->settings['display_number'] ) && 'invoice_number' === $this->settings['display_number']
			? (string) $this->get_number()
			: ( is_callable( array( $this->order, 'get_order_number' ) ) ? $this->order->get_order_number() : '' );
		$suffix   = '' === $suffix ? (string) $this->order_id : $suffix;
		$filename = 'invoice-' . $suffix . '.pdf';
		return sanitize_file_name( apply_filters( 'wpo_wcpdf_filename', $filename, $this->get_type(), array( $this->order_id ), $context, $args ) );
	}
}

/**
 * As the plugin's SequentialNumberStore: a table `{prefix}wcpdf_{store}`
 * (id, order_id, date, calculated_number); `auto_increment` takes the
 * INSERT's id, `calculate` the last row's number plus one.
 */
class SequentialNumberStore {
	public $store_name;
	public $method;
	public $table_name;
	public $is_new = false;

	public function __construct( string $store_name, string $method = 'auto_increment' ) {
		global $wpdb;
		$this->store_name = $store_name;
		$this->method     = $method;
		$this->table_name = apply_filters( 'wpo_wcpdf_number_store_table_name', "{$wpdb->prefix}wcpdf_{$store_name}", $store_name, $method );
		if ( $wpdb->get_var( $wpdb->prepare( 'SHOW TABLES LIKE %s', $this->table_name ) ) !== $this->table_name ) {
			$this->is_new = true;
			$wpdb->query(
				"CREATE TABLE IF NOT EXISTS {$this->table_name} (
					id int(16) NOT NULL AUTO_INCREMENT,
					order_id int(16),
					date datetime DEFAULT '1000-01-01 00:00:00' NOT NULL,
					calculated_number int(16),
					PRIMARY KEY  (id),
					KEY order_id (order_id)
				) {$wpdb->get_charset_collate()}"
			);
		}
	}

	public function increment( int $order_id = 0, ?string $date = null ): int {
		global $wpdb;
		$date = empty( $date ) ? current_time( 'mysql' ) : $date;
		$data = array(
			'order_id' => absint( $order_id ),
			'date'     => $date,
		);
		if ( 'calculate' === $this->method ) {
			$number = $data['calculated_number'] = $this->get_next();
			$wpdb->insert( $this->table_name, $data );
			return $number;
		}
		$wpdb->insert( $this->table_name, $data );
		return (int) $wpdb->insert_id;
	}

	public function get_next(): int {
		global $wpdb;
		$last = $wpdb->get_row( "SELECT * FROM {$this->table_name} WHERE id = ( SELECT MAX(id) FROM {$this->table_name} )" );
		if ( ! empty( $last->calculated_number ) ) {
			return (int) $last->calculated_number + 1;
		}
		return ! empty( $last->id ) ? (int) $last->id + 1 : 1;
	}

	/**
	 * As the plugin's (its "Next invoice number" setting): the table
	 * emptied, then above 1 a row of the number before, on no order
	 * (order_id 0), so that the next number is $number.
	 */
	public function set_next( int $number = 1 ): void {
		global $wpdb;
		$wpdb->query( "TRUNCATE TABLE {$this->table_name}" );
		if ( $number > 1 ) {
			$highest = $number - 1;
			$wpdb->query( "ALTER TABLE {$this->table_name} AUTO_INCREMENT = {$highest}" );
			$data = array(
				'order_id' => 0,
				'date'     => current_time( 'mysql' ),
			);
			if ( 'calculate' === $this->method ) {
				$data['calculated_number'] = $highest;
			}
			$wpdb->insert( $this->table_name, $data );
		} else {
			$wpdb->query( "ALTER TABLE {$this->table_name} AUTO_INCREMENT = {$number}" );
		}
	}
}
