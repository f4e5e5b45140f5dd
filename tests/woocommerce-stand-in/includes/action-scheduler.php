<?php
/**
 * STAND-IN Action Scheduler: its public functions on a table of its own
 * ({prefix}cf_stand_in_actions). Like the real one, a running action counts
 * as scheduled for as_has_scheduled_action(); nothing runs by itself: tests
 * run due actions (ActionScheduler::runner()->process_action( $id )), as
 * WP-Cron or the async request would.
 *
 * @package Counterfoil\Tests
 */

// phpcs:disable -- test code: a stand-in, not shipped.

defined( 'ABSPATH' ) || exit;

function cf_stand_in_actions_table() {
	global $wpdb;
	return $wpdb->prefix . 'cf_stand_in_actions';
}

function as_schedule_single_action( $timestamp, $hook, $args = array(), $group = '', $unique = false, $priority = 10 ) {
	global $wpdb;
	$wpdb->insert(
		cf_stand_in_actions_table(),
		array(
			'hook'         => $hook,
			'args'         => wp_json_encode( array_values( $args ) ),
			'action_group' => $group,
			'scheduled_at' => (int) $timestamp,
			'status'       => 'pending',
		)
	);
	return (int) $wpdb->insert_id;
}

function as_enqueue_async_action( $hook, $args = array(), $group = '', $unique = false, $priority = 10 ) {
	// As the real one: an async action has no date (a null schedule).
	return as_schedule_single_action( 0, $hook, $args, $group );
}

function as_has_scheduled_action( $hook, $args = null, $group = '' ) {
	global $wpdb;
	$sql = $wpdb->prepare( 'SELECT COUNT(*) FROM ' . cf_stand_in_actions_table() . " WHERE hook = %s AND status IN ('pending', 'in-progress')", $hook );
	if ( null !== $args ) {
		$sql .= $wpdb->prepare( ' AND args = %s', wp_json_encode( array_values( $args ) ) );
	}
	if ( '' !== $group ) {
		$sql .= $wpdb->prepare( ' AND action_group = %s', $group );
	}
	return (int) $wpdb->get_var( $sql ) > 0;
}

function as_next_scheduled_action( $hook, $args = null, $group = '' ) {
	return as_has_scheduled_action( $hook, $args, $group );
}

/** As the real one for: hook, status, group, per_page; $return_format 'ids' or objects with get_hook/get_args/get_schedule. */
function as_get_scheduled_actions( $args = array(), $return_format = OBJECT ) {
	global $wpdb;
	$sql = 'SELECT * FROM ' . cf_stand_in_actions_table() . ' WHERE 1=1';
	if ( isset( $args['hook'] ) ) {
		$sql .= $wpdb->prepare( ' AND hook = %s', $args['hook'] );
	}
	if ( isset( $args['status'] ) ) {
		$sql .= $wpdb->prepare( ' AND status = %s', $args['status'] );
	}
	if ( isset( $args['group'] ) ) {
		$sql .= $wpdb->prepare( ' AND action_group = %s', $args['group'] );
	}
	$sql .= ' ORDER BY action_id LIMIT ' . (int) ( $args['per_page'] ?? 5 );
	$rows = $wpdb->get_results( $sql );
	$out  = array();
	foreach ( $rows as $row ) {
		$out[ (int) $row->action_id ] = 'ids' === $return_format ? (int) $row->action_id : new CF_Stand_In_Action( $row );
	}
	return 'ids' === $return_format ? array_values( $out ) : $out;
}

/** An action as as_get_scheduled_actions() returns it. */
final class CF_Stand_In_Action {
	private $row;
	public function __construct( $row ) { $this->row = $row; }
	public function get_hook() { return $this->row->hook; }
	public function get_args() { return json_decode( $this->row->args, true ); }
	public function get_group() { return $this->row->action_group; }
	public function get_schedule() { return new CF_Stand_In_Schedule( (int) $this->row->scheduled_at ); }
}

final class CF_Stand_In_Schedule {
	private $at;
	public function __construct( $at ) { $this->at = $at; }
	public function get_date() { return 0 === $this->at ? null : new DateTime( '@' . $this->at ); }
}

final class ActionScheduler {
	public static function runner() {
		return new CF_Stand_In_Runner();
	}
}

/** Runs one action: in-progress while its hook runs, then complete or failed. */
final class CF_Stand_In_Runner {
	public function process_action( $action_id, $context = '' ) {
		global $wpdb;
		$table = cf_stand_in_actions_table();
		$row   = $wpdb->get_row( $wpdb->prepare( "SELECT * FROM $table WHERE action_id = %d", $action_id ) );
		if ( ! $row || 'pending' !== $row->status ) {
			return;
		}
		$wpdb->update( $table, array( 'status' => 'in-progress' ), array( 'action_id' => $action_id ) );
		try {
			do_action_ref_array( $row->hook, json_decode( $row->args, true ) );
			$wpdb->update( $table, array( 'status' => 'complete' ), array( 'action_id' => $action_id ) );
		} catch ( Throwable $e ) {
			$wpdb->update( $table, array( 'status' => 'failed' ), array( 'action_id' => $action_id ) );
		}
	}
}
