<?php
/**
 * A document refused: `term` names the business term (BT-1, BT-25, …).
 *
 * One class of its own (it was in class-counterfoil-einvoice.php).
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * A document refused: `term` names the business term (BT-1, BT-25, …).
 */
final class Counterfoil_Einvoice_Refusal extends InvalidArgumentException {
	/** @var string The business term. */
	public $term;

	/**
	 * @param string $term    Business term.
	 * @param string $message Why.
	 */
	public function __construct( $term, $message ) {
		parent::__construct( $term . ': ' . $message );
		$this->term = $term;
	}
}
