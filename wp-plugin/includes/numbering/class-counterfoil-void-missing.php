<?php
/**
 * A void found no number to void (rolled back; the caller says so).
 *
 * One class of its own (it was in class-counterfoil-invoices.php).
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * A void found no number to void (rolled back; the caller says so).
 */
final class Counterfoil_Void_Missing extends RuntimeException {
}
