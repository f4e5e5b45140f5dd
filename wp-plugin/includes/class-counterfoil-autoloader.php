<?php
/**
 * Loads the plugin's classes on first use, from one map of class => file.
 *
 * Invariants: every class, interface and trait under includes/ is in the
 * map, one per file, and the map names no file that does not declare its
 * class (tests/tests/wp_hardening.rs holds the tree to it); a class the map
 * does not name is left to other autoloaders; `Counterfoil\*` exceptions are
 * declared by the extension when it is loaded, so their files here load
 * only without it.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/** The plugin's autoloader. */
final class Counterfoil_Autoloader {

	/** Class => its file, relative to includes/. */
	const CLASSES = array(
		'Counterfoil_Admin'                          => 'admin/class-counterfoil-admin.php',
		'Counterfoil_Extension_Backend'              => 'backends/class-counterfoil-extension-backend.php',
		'Counterfoil_Php_Backend'                    => 'backends/class-counterfoil-php-backend.php',
		'Counterfoil_Retryable'                      => 'backends/class-counterfoil-retryable.php',
		'Counterfoil_Same_Request'                   => 'backends/class-counterfoil-same-request.php',
		'Counterfoil_Strict_Wpdb'                    => 'backends/class-counterfoil-strict-wpdb.php',
		'Counterfoil_Wpdb_Transaction'               => 'backends/class-counterfoil-wpdb-transaction.php',
		'Counterfoil\\DatabaseUnavailableException'  => 'backends/exceptions/class-database-unavailable-exception.php',
		'Counterfoil\\InvalidArgumentException'      => 'backends/exceptions/class-invalid-argument-exception.php',
		'Counterfoil\\OverflowException'             => 'backends/exceptions/class-overflow-exception.php',
		'Counterfoil\\SeriesClosedException'         => 'backends/exceptions/class-series-closed-exception.php',
		'Counterfoil\\SeriesExistsException'         => 'backends/exceptions/class-series-exists-exception.php',
		'Counterfoil\\SeriesNotFoundException'       => 'backends/exceptions/class-series-not-found-exception.php',
		'Counterfoil\\TimeoutException'              => 'backends/exceptions/class-timeout-exception.php',
		'Counterfoil_Backend'                        => 'backends/interface-counterfoil-backend.php',
		'Counterfoil_Php_Backend_Credit_Notes'       => 'backends/trait-counterfoil-php-backend-credit-notes.php',
		'Counterfoil_Books'                          => 'books/class-counterfoil-books.php',
		'Counterfoil_Credit_Note_Admin'              => 'books/class-counterfoil-credit-note-admin.php',
		'Counterfoil_Invoice_Screen'                 => 'books/class-counterfoil-invoice-screen.php',
		'Counterfoil_Registry_Table'                 => 'books/class-counterfoil-registry-table.php',
		'Counterfoil_Series_Table'                   => 'books/class-counterfoil-series-table.php',
		'Counterfoil_Log'                            => 'class-counterfoil-log.php',
		'Counterfoil_Documents'                      => 'documents/class-counterfoil-documents.php',
		'Counterfoil_Einvoice_Refusal'               => 'documents/class-counterfoil-einvoice-refusal.php',
		'Counterfoil_Einvoice'                       => 'documents/class-counterfoil-einvoice.php',
		'Counterfoil_Vat_Categories'                 => 'documents/class-counterfoil-vat-categories.php',
		'Counterfoil_Xml_Writer'                     => 'documents/class-counterfoil-xml-writer.php',
		'Counterfoil_Zip'                            => 'documents/class-counterfoil-zip.php',
		'Counterfoil_Stripe'                         => 'integrations/class-counterfoil-stripe.php',
		'Counterfoil_WooCommerce_Backfill'           => 'integrations/woocommerce/class-counterfoil-woocommerce-backfill.php',
		'Counterfoil_WooCommerce_Bulk'               => 'integrations/woocommerce/class-counterfoil-woocommerce-bulk.php',
		'Counterfoil_WooCommerce_Orders_Filter'      => 'integrations/woocommerce/class-counterfoil-woocommerce-orders-filter.php',
		'Counterfoil_WooCommerce_Display'            => 'integrations/woocommerce/class-counterfoil-woocommerce-display.php',
		'Counterfoil_WooCommerce_Documents'          => 'integrations/woocommerce/class-counterfoil-woocommerce-documents.php',
		'Counterfoil_WooCommerce_Pdf'                => 'integrations/woocommerce/class-counterfoil-woocommerce-pdf.php',
		'Counterfoil_WooCommerce'                    => 'integrations/woocommerce/class-counterfoil-woocommerce.php',
		'Counterfoil_Chain'                          => 'numbering/class-counterfoil-chain.php',
		'Counterfoil_Credit_Notes'                   => 'numbering/class-counterfoil-credit-notes.php',
		'Counterfoil_Invoice_Type'                   => 'numbering/class-counterfoil-invoice-type.php',
		'Counterfoil_Invoices'                       => 'numbering/class-counterfoil-invoices.php',
		'Counterfoil_Rules'                          => 'numbering/class-counterfoil-rules.php',
		'Counterfoil_Schema'                         => 'numbering/class-counterfoil-schema.php',
		'Counterfoil_Series_Life'                    => 'numbering/class-counterfoil-series-life.php',
		'Counterfoil_Site_Identity'                  => 'numbering/class-counterfoil-site-identity.php',
		'Counterfoil_Timing'                         => 'numbering/class-counterfoil-timing.php',
		'Counterfoil_Void_Missing'                   => 'numbering/class-counterfoil-void-missing.php',
		'Counterfoil_Rest'                           => 'rest/class-counterfoil-rest.php',
	);

	/** Registers the autoloader (once). */
	public static function register() {
		static $done = false;
		if ( ! $done ) {
			spl_autoload_register( array( __CLASS__, 'load' ) );
			$done = true;
		}
	}

	/**
	 * Loads a class of the plugin's.
	 *
	 * @param string $class_name Class.
	 */
	public static function load( $class_name ) {
		if ( isset( self::CLASSES[ $class_name ] ) ) {
			require __DIR__ . '/' . self::CLASSES[ $class_name ];
		}
	}
}
