<?php
/**
 * A keyed allocation met its own key in the registry (the same request at
 * the same moment): rolled back, then answered with the other call's number.
 *
 * One class of its own (it was in class-counterfoil-php-backend.php).
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * A keyed allocation met its own key in the registry (the same request at
 * the same moment): rolled back, then answered with the other call's number.
 */
final class Counterfoil_Same_Request extends Exception {
	/** @var int The number this try had taken (rolled back). */
	public $number;

	/** @param int $number The number this try had taken. */
	public function __construct( $number ) {
		parent::__construct( 'the same request key at the same moment' );
		$this->number = $number;
	}
}
