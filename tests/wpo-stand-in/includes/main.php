<?php
/**
 * STAND-IN of WP Overnight's plugin classes (its includes/Settings.php,
 * Documents.php, Main.php and Admin.php): only the settings, the document
 * registry, the e-mail attachments and the order screen's number editing.
 *
 * @package Counterfoil\Tests
 */

// phpcs:disable -- test code: a stand-in, not shipped.

namespace WPO\IPS;

defined( 'ABSPATH' ) || exit;

/** As the plugin's Settings: read once, when the classes load (init, priority 9). */
class Settings {
	public array $general_settings;
	public array $debug_settings;

	public function __construct() {
		$this->load_settings();
	}

	public function load_settings(): void {
		$general = get_option( 'wpo_wcpdf_settings_general', array() );
		$debug   = get_option( 'wpo_wcpdf_settings_debug', array() );
		$this->general_settings = is_array( $general ) ? $general : array();
		$this->debug_settings   = is_array( $debug ) ? $debug : array();
	}

	public function get_document_settings( $document_type, $output_format = 'pdf' ) {
		$option = ( 'pdf' === $output_format || 'xml' === $output_format )
			? "wpo_wcpdf_documents_settings_{$document_type}"
			: "wpo_wcpdf_documents_settings_{$document_type}_{$output_format}";
		return get_option( $option, array() );
	}

	public function user_can_manage_settings() {
		return current_user_can( apply_filters( 'wpo_wcpdf_settings_default_user_capability', 'manage_woocommerce' ) );
	}

	public function get_sequential_number_store_method() {
		return isset( $this->debug_settings['calculate_document_numbers'] ) ? 'calculate' : 'auto_increment';
	}
}

/** As the plugin's Documents: the invoice, and others' through `wpo_wcpdf_document_classes` (init, priority 15). */
class Documents {
	public $documents = array();

	public function __construct() {
		add_action( 'init', array( $this, 'init' ), 15 );
	}

	public function init() {
		$this->documents['\WPO\IPS\Documents\Invoice'] = new \WPO\IPS\Documents\Invoice();
		$this->documents = apply_filters( 'wpo_wcpdf_document_classes', $this->documents );
		do_action( 'wpo_wcpdf_init_documents' );
	}

	public function get_documents( $filter = 'enabled', $output_format = 'pdf' ) {
		if ( empty( $this->documents ) ) {
			$this->init();
		}
		if ( 'enabled' !== $filter ) {
			return apply_filters( 'wpo_wcpdf_get_documents', $this->documents, $filter, $output_format, $this );
		}
		$documents = array();
		foreach ( $this->documents as $class_name => $document ) {
			foreach ( (array) $document->output_formats as $format ) {
				if ( ( 'any' === $output_format || $format === $output_format ) && $document->is_enabled( $format ) ) {
					$documents[ $class_name ] = $document;
					break;
				}
			}
		}
		return apply_filters( 'wpo_wcpdf_get_documents', $documents, $filter, $output_format, $this );
	}

	public function get_document( $document_type, $order ) {
		foreach ( $this->get_documents( 'all' ) as $class_name => $document ) {
			if ( $document->get_type() == $document_type && class_exists( $class_name ) ) {
				return new $class_name( $order );
			}
		}
		return false;
	}
}

/** As the plugin's Main: its e-mail attachments (its Semaphore and booking/third-party paths are not here). */
class Main {
	public function __construct() {
		add_filter( 'woocommerce_email_attachments', array( $this, 'attach_document_to_email' ), 99, 4 );
	}

	public function attach_document_to_email( $attachments, $email_id, $order, $email = null ) {
		if ( ! is_object( $order ) || ! isset( $email_id ) ) {
			return $attachments;
		}
		$order = apply_filters( 'wpo_wcpdf_email_order_object', $order, $email_id, $email );
		if ( ! ( $order instanceof \WC_Order || is_subclass_of( $order, '\WC_Abstract_Order' ) ) ) {
			return $attachments;
		}
		if ( in_array( $email_id, array( 'no_stock', 'low_stock', 'backorder', 'customer_new_account', 'customer_reset_password' ), true ) ) {
			return $attachments;
		}
		foreach ( $this->get_documents_for_email( $email_id, $order ) as $output_format => $document_types ) {
			foreach ( $document_types as $document_type ) {
				$email_order    = apply_filters( 'wpo_wcpdf_email_attachment_order', $order, $email, $document_type );
				$email_order_id = $email_order->get_id();
				do_action( 'wpo_wcpdf_before_attachment_creation', $email_order, $email_id, $document_type );
				try {
					// As the plugin: by id, the order read again.
					$document = wcpdf_get_document( $document_type, (array) $email_order_id, true );
					if ( ! $document ) {
						wcpdf_log_error( "Couldn't get the document object for email attachment. document type: {$document_type}, output format: {$output_format}, email order ID: #{$email_order_id}", 'critical' );
						continue;
					}
					$attachment = wcpdf_get_document_file( $document, $output_format );
					if ( ! $attachment ) {
						continue;
					}
					$attachments[] = $attachment;
					do_action( 'wpo_wcpdf_email_attachment', $attachment, $document_type, $document, $output_format );
				} catch ( \Exception $e ) {
					wcpdf_log_error( $e->getMessage(), 'critical', $e );
					continue;
				} catch ( \Error $e ) {
					wcpdf_log_error( $e->getMessage(), 'critical', $e );
					continue;
				}
			}
		}
		return $attachments;
	}

	public function get_documents_for_email( $email_id, $order ) {
		$attach = array();
		foreach ( WPO_WCPDF()->documents->get_documents( 'enabled', 'any' ) as $document ) {
			foreach ( $document->output_formats as $output_format ) {
				if ( $document->is_enabled( $output_format ) ) {
					$attach[ $output_format ][ $document->get_type() ] = $document->get_attach_to_email_ids( $output_format );
				}
			}
		}
		$attach = apply_filters( 'wpo_wcpdf_attach_documents', $attach );
		$types  = array();
		foreach ( $attach as $output_format => $documents ) {
			foreach ( $documents as $document_type => $email_ids ) {
				$extra = apply_filters( 'wpo_wcpdf_custom_attachment_condition', true, $order, $email_id, $document_type, $output_format );
				if ( in_array( $email_id, $email_ids, true ) && $extra ) {
					$types[ $output_format ][] = $document_type;
				}
			}
		}
		return apply_filters( 'wpo_wcpdf_document_types_for_email', $types, $email_id, $order );
	}

	public function get_tmp_path( $type = '' ) {
		$path = trailingslashit( wp_upload_dir()['basedir'] ) . 'wpo_wcpdf_stand_in/' . ( 'attachments' === $type ? 'attachments/' : '' );
		wp_mkdir_p( $path );
		return $path;
	}

	public function get_document_pdf_attachment( $document, $tmp_path ) {
		$pdf_path = $tmp_path . $document->get_filename();
		file_put_contents( $pdf_path, $document->get_pdf() );
		return $pdf_path;
	}
}

/** As the plugin's Admin: who manages documents, and the order screen's number and date editing. */
class Admin {
	public function user_can_manage_document( $document_type ) {
		return apply_filters( 'wpo_wcpdf_current_user_is_allowed', ( current_user_can( 'manage_woocommerce_orders' ) || current_user_can( 'edit_shop_orders' ) ), $document_type );
	}

	/** As the plugin's: editing an invoice's or credit note's number and date needs the `enable_document_data_editing` debug setting. */
	private function editing_enabled( $document ) {
		return WPO_WCPDF()->settings->user_can_manage_settings()
			&& ( ! empty( WPO_WCPDF()->settings->debug_settings['enable_document_data_editing'] ) || ! in_array( $document->get_type(), array( 'invoice', 'credit-note' ), true ) );
	}

	/** As the plugin's: the document data the order screen posted (number and date only when editing is on; notes always). */
	public function process_order_document_form_data( array $form_data, $document ): array {
		$data = array();
		if (
			false === check_ajax_referer( 'wpo_wcpdf_save_document', 'security', false ) &&
			( empty( $_POST['woocommerce_meta_nonce'] ) || ! wp_verify_nonce( sanitize_text_field( wp_unslash( $_POST['woocommerce_meta_nonce'] ) ), 'woocommerce_save_data' ) )
		) {
			return $data;
		}
		$key_prefix = "_wcpdf_{$document->slug}_";
		if ( $this->editing_enabled( $document ) ) {
			if ( isset( $form_data[ "{$key_prefix}number_prefix" ] ) ) {
				$data['number']['prefix'] = sanitize_text_field( $form_data[ "{$key_prefix}number_prefix" ] );
			}
			if ( isset( $form_data[ "{$key_prefix}number_plain" ] ) ) {
				$data['number']['number'] = absint( $form_data[ "{$key_prefix}number_plain" ] );
			}
			if ( isset( $form_data[ "{$key_prefix}number_suffix" ] ) ) {
				$data['number']['suffix'] = sanitize_text_field( $form_data[ "{$key_prefix}number_suffix" ] );
			}
			if ( isset( $form_data[ "{$key_prefix}number_padding" ] ) ) {
				$data['number']['padding'] = absint( $form_data[ "{$key_prefix}number_padding" ] );
			}
			if ( isset( $form_data[ "{$key_prefix}number_formatted" ] ) ) {
				$data['number']['formatted_number'] = sanitize_text_field( $form_data[ "{$key_prefix}number_formatted" ] );
			}
			if ( ! empty( $data['number'] ) ) {
				$data['number']['document_type'] = $document->get_type();
				$data['number']['order_id']      = $document->order->get_id();
			}
			if ( ! empty( $form_data[ "{$key_prefix}date" ]['date'] ) ) {
				$data['date'] = gmdate( 'Y-m-d', strtotime( $form_data[ "{$key_prefix}date" ]['date'] ) ) . ' 00:00:00';
			}
		}
		if ( isset( $form_data[ "{$key_prefix}notes" ] ) ) {
			$data['notes'] = wp_kses_post( $form_data[ "{$key_prefix}notes" ] );
		}
		return $data;
	}

	/** As the plugin's: the number and date, editable fields only when editing is on, else its notice. */
	public function output_number_date_edit_fields( $document, $data ): void {
		if ( empty( $document ) || empty( $document->order ) ) {
			return;
		}
		$data = apply_filters( 'wpo_wcpdf_document_data_meta_box_fields', $data, $document );
		if ( empty( $data ) ) {
			return;
		}
		$prefix = "_wcpdf_{$document->slug}_";
		echo '<div class="wcpdf-data-fields" data-document="' . esc_attr( $document->get_type() ) . '">';
		echo '<div class="read-only">' . esc_html( (string) $document->get_number( $document->get_type(), null, 'view', true ) ) . '</div>';
		echo '<div class="editable editable-number-date">';
		if ( $this->editing_enabled( $document ) ) {
			if ( ! empty( $data['number'] ) ) {
				foreach ( array( 'prefix', 'suffix', 'padding', 'plain' ) as $part ) {
					echo '<input type="text" name="' . esc_attr( "{$prefix}number_{$part}" ) . '" disabled="disabled">';
				}
			}
			if ( isset( $data['date'] ) ) {
				echo '<input type="text" name="' . esc_attr( "{$prefix}date" ) . '[date]" disabled="disabled">';
			}
		} else {
			echo '<div class="notice notice-warning inline"><p>' . esc_html( sprintf( 'Editing of %s number and date is currently disabled.', $document->get_title() ) ) . '</p></div>';
		}
		echo '</div></div>';
	}
}
