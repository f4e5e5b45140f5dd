<?php
/**
 * Plugin Name: WP Overnight PDF Invoices STAND-IN (Counterfoil tests only)
 * Description: Not WP Overnight's "PDF Invoices & Packing Slips for WooCommerce". A stand-in for the Counterfoil test suites: only the code paths Counterfoil's integration meets, with that plugin's class names, hooks and order meta. The same suites run against the real plugin when COUNTERFOIL_WPO names one.
 * Version: 0.0.0-stand-in
 *
 * It follows WP Overnight's plugin as of its 5.16.1 (its repository's
 * head, commit c109c5f3), file by file (tests/wpo-stand-in/README.md):
 * - documents (`includes/documents.php`): `\WPO\IPS\Documents\DocumentNumber`,
 *   `OrderDocument` (initiate_number() catching every \Exception|\Error,
 *   get_document_number() asking `woocommerce_{slug}_number_by_plugin` /
 *   `wpo_wcpdf_external_{slug}_number_enabled` then the legacy
 *   `woocommerce_generate_{slug}_number`, `woocommerce_{slug}_number` and
 *   `wpo_wcpdf_external_{slug}_number`; a numeric answer formatted with the
 *   stored number format, a non-numeric one kept as formatted, a
 *   DocumentNumber as it is; else its own number store), `is_allowed()`
 *   through `wpo_wcpdf_document_is_allowed`, save() writing
 *   `_wcpdf_{slug}_number` (formatted) and `_wcpdf_{slug}_number_data`;
 *   `OrderDocumentMethods`, `Invoice`, `SequentialNumberStore`;
 * - `wcpdf_get_document()` (is_allowed(), then init() and save() when asked,
 *   then the `wcpdf_get_document` filter) and `wcpdf_get_document_file()`;
 * - its e-mail attachments (`woocommerce_email_attachments` at priority 99,
 *   the documents set to attach to that e-mail, `wpo_wcpdf_email_attachment`
 *   after each file);
 * - the order screen's number editing (`Admin::process_order_document_form_data()`,
 *   `Admin::output_number_date_edit_fields()`), on when the
 *   `enable_document_data_editing` debug setting is;
 * - its settings (`wpo_wcpdf_documents_settings_{type}`, `wpo_wcpdf_settings_debug`),
 *   loaded on `init` at priority 9 as the plugin's classes are.
 *
 * @package Counterfoil\Tests
 */

// phpcs:disable -- test code: a stand-in, not shipped.

defined( 'ABSPATH' ) || exit;

require_once __DIR__ . '/includes/functions.php';
require_once __DIR__ . '/includes/documents.php';
require_once __DIR__ . '/includes/main.php';

/** What WPO_WCPDF() returns: the plugin's classes, loaded on init (priority 9). */
final class WPO_WCPDF_Stand_In {
	public $version = '0.0.0-stand-in';
	/** @var \WPO\IPS\Settings */
	public $settings;
	/** @var \WPO\IPS\Documents */
	public $documents;
	/** @var \WPO\IPS\Main */
	public $main;
	/** @var \WPO\IPS\Admin */
	public $admin;
	private static $instance;

	public static function instance() {
		return self::$instance ?: ( self::$instance = new self() );
	}

	private function __construct() {
		// As the plugin: its classes once WooCommerce is there ("Pro runs on default 10").
		add_action( 'init', array( $this, 'load_classes' ), 9 );
	}

	public function load_classes() {
		if ( ! class_exists( 'WooCommerce' ) ) {
			return;
		}
		$this->settings  = new \WPO\IPS\Settings();
		$this->documents = new \WPO\IPS\Documents();
		$this->main      = new \WPO\IPS\Main();
		$this->admin     = new \WPO\IPS\Admin();
	}

	public function plugin_path() {
		return __DIR__;
	}
}

function WPO_WCPDF() {
	return WPO_WCPDF_Stand_In::instance();
}

WPO_WCPDF();
