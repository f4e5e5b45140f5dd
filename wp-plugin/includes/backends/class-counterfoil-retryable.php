<?php
/**
 * A failure worth another try; carries the exception to throw if none is left.
 *
 * One class of its own (it was in class-counterfoil-php-backend.php).
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * A failure worth another try; carries the exception to throw if none is left.
 *
 * @internal
 */
final class Counterfoil_Retryable extends RuntimeException {
	/** @var Throwable */
	private $final;
	/** @var bool */
	private $retry;

	public function __construct( Throwable $final, $retry = true ) {
		parent::__construct( $final->getMessage(), (int) $final->getCode() );
		$this->final = $final;
		$this->retry = $retry;
	}

	public function final_exception() {
		return $this->final;
	}

	public function retryable() {
		return $this->retry;
	}
}
