<?php
/**
 * Counterfoil\InvalidArgumentException, declared in PHP when the counterfoil
 * extension is not loaded (the extension declares the same class; the
 * autoloader is asked only for a class that does not exist). Both
 * backends throw it, so callers catch the same class either way.
 *
 * @package Counterfoil
 */

namespace Counterfoil;

defined( 'ABSPATH' ) || exit;

/** Bad input; nothing was written. */
class InvalidArgumentException extends \InvalidArgumentException {}
