<?php
/**
 * A zip archive made in memory: files stored as they are (no compression:
 * the documents it carries are PDFs, already compressed), UTF-8 names.
 *
 * Invariants: nothing touches the disk (the archive is a string, so a
 * customer's documents are never left in a temporary folder); each name is
 * unique in the archive (a second file of a name gets " (2)" before its
 * extension) and holds no folder part or control character; the archive
 * is a classic zip (no zip64): at most 65,535 files and 4 GiB, refused
 * beyond that.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/** An in-memory zip archive of stored files. */
final class Counterfoil_Zip {

	/** The most files a classic zip holds. */
	const MAX_FILES = 65535;

	/** @var string[] The local headers and data, in order. */
	private $parts = array();

	/** @var string[] The central directory's records. */
	private $directory = array();

	/** @var int The offset of the next local header. */
	private $offset = 0;

	/** @var bool[] The names taken (lower-cased). */
	private $names = array();

	/** @var int The DOS time and date of every file (now, UTC). */
	private $dos_time;

	/** @var int */
	private $dos_date;

	/** Starts an empty archive. */
	public function __construct() {
		$now            = getdate( time() );
		$this->dos_time = ( $now['hours'] << 11 ) | ( $now['minutes'] << 5 ) | intdiv( $now['seconds'], 2 );
		$this->dos_date = ( ( max( 1980, $now['year'] ) - 1980 ) << 9 ) | ( $now['mon'] << 5 ) | $now['mday'];
	}

	/**
	 * Adds a file.
	 *
	 * @param string $name  Its name (folder parts and control characters are dropped).
	 * @param string $bytes Its content.
	 * @return string The name it has in the archive.
	 * @throws LengthException Beyond a classic zip's limits.
	 */
	public function add( $name, $bytes ) {
		if ( count( $this->directory ) >= self::MAX_FILES || $this->offset + strlen( $bytes ) + 1024 > 0xFFFFFFFF ) {
			throw new LengthException( 'The archive would be beyond a zip\'s limits.' );
		}
		$name   = $this->unique( $this->clean( $name ) );
		$crc    = crc32( $bytes );
		$size   = strlen( $bytes );
		$common = pack( 'vvvvVVVv', 0x0800, 0, $this->dos_time, $this->dos_date, $crc, $size, $size, strlen( $name ) );
		// Local header: signature, version needed 2.0, then the common fields, no extra field.
		$local             = pack( 'Vv', 0x04034b50, 20 ) . $common . pack( 'v', 0 ) . $name;
		$this->directory[] = pack( 'Vvv', 0x02014b50, 0x0314, 20 ) . $common
			. pack( 'vvvvVV', 0, 0, 0, 0, 0100644 << 16, $this->offset ) . $name;
		$this->parts[]     = $local . $bytes;
		$this->offset     += strlen( $local ) + $size;
		return $name;
	}

	/**
	 * The archive's bytes.
	 *
	 * @return string
	 */
	public function bytes() {
		$directory = implode( '', $this->directory );
		$count     = count( $this->directory );
		return implode( '', $this->parts ) . $directory
			. pack( 'VvvvvVVv', 0x06054b50, 0, 0, $count, $count, strlen( $directory ), $this->offset, 0 );
	}

	/**
	 * A name without folder parts or control characters, never empty.
	 *
	 * @param string $name Name.
	 * @return string
	 */
	private function clean( $name ) {
		$name = (string) preg_replace( '/[\x00-\x1F\x7F\/\\\\:]+/u', '-', (string) $name );
		$name = trim( $name, " .-\t" );
		return '' === $name ? 'file' : $name;
	}

	/**
	 * The name, or the name with " (n)" before its extension when taken.
	 *
	 * @param string $name Name.
	 * @return string
	 */
	private function unique( $name ) {
		$dot  = strrpos( $name, '.' );
		$stem = false === $dot ? $name : substr( $name, 0, $dot );
		$ext  = false === $dot ? '' : substr( $name, $dot );
		$try  = $name;
		for ( $n = 2; isset( $this->names[ strtolower( $try ) ] ); $n++ ) {
			$try = $stem . ' (' . $n . ')' . $ext;
		}
		$this->names[ strtolower( $try ) ] = true;
		return $try;
	}
}
