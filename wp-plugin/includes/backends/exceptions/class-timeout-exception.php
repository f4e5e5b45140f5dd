<?php
/**
 * Counterfoil\TimeoutException, declared in PHP when the counterfoil
 * extension is not loaded (the extension declares the same class; the
 * autoloader is asked only for a class that does not exist). Both
 * backends throw it, so callers catch the same class either way.
 *
 * @package Counterfoil
 */

namespace Counterfoil;

defined( 'ABSPATH' ) || exit;

/** The call did not finish within its deadline. */
class TimeoutException extends \RuntimeException {}
