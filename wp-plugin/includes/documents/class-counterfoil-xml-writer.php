<?php
/**
 * The XML writer of the serializers (core/src/einvoice/xml.rs's twin):
 * two-space indentation, escaped text and attributes, blank optional
 * elements left out.
 *
 * One class of its own (it was in class-counterfoil-einvoice.php).
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * The XML writer of the serializers (core/src/einvoice/xml.rs's twin):
 * two-space indentation, escaped text and attributes, blank optional
 * elements left out.
 */
final class Counterfoil_Xml_Writer {
	/** @var string */
	private $out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
	/** @var string[] */
	private $open = array();

	/** Escapes text for an element or an attribute value. */
	public static function escape( $text ) {
		// Control characters, U+FFFE and U+FFFF: not characters in XML 1.0.
		$text = str_replace( array( "\xEF\xBF\xBE", "\xEF\xBF\xBF" ), '', preg_replace( '/[\x00-\x08\x0B\x0C\x0E-\x1F]/', '', (string) $text ) );
		return strtr(
			$text,
			array(
				'&'  => '&amp;',
				'<'  => '&lt;',
				'>'  => '&gt;',
				'"'  => '&quot;',
				"'"  => '&apos;',
			)
		);
	}

	private function attributes( array $attrs ) {
		$s = '';
		foreach ( $attrs as $k => $v ) {
			$s .= ' ' . $k . '="' . self::escape( $v ) . '"';
		}
		return $s;
	}

	/** Opens an element. */
	public function open( $name, array $attrs = array() ) {
		$this->out   .= str_repeat( '  ', count( $this->open ) ) . '<' . $name . $this->attributes( $attrs ) . ">\n";
		$this->open[] = $name;
		return $this;
	}

	/** Closes the innermost open element. */
	public function close() {
		$name       = array_pop( $this->open );
		$this->out .= str_repeat( '  ', count( $this->open ) ) . '</' . $name . ">\n";
		return $this;
	}

	/** An element holding text. */
	public function leaf( $name, $text, array $attrs = array() ) {
		$this->out .= str_repeat( '  ', count( $this->open ) ) . '<' . $name . $this->attributes( $attrs ) . '>' . self::escape( $text ) . '</' . $name . ">\n";
		return $this;
	}

	/** leaf() when the text is present and not blank. */
	public function leaf_opt( $name, $text ) {
		if ( is_string( $text ) && ! Counterfoil_Einvoice::blank( $text ) ) {
			$this->leaf( $name, $text );
		}
		return $this;
	}

	/** The document, every element closed. */
	public function finish() {
		while ( ! empty( $this->open ) ) {
			$this->close();
		}
		return $this->out;
	}
}
