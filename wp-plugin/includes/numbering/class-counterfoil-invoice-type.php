<?php
/**
 * The invoice and credit-note post types and what protects them.
 *
 * Invariants:
 * - the post types are `counterfoil_invoice` and `counterfoil_cnote` (a post type is at most 20 characters)
 *   (prefixed: another plugin's `invoice` posts are never ours), sharing
 *   their own capabilities, granted to the
 *   roles of the `counterfoil_invoice_roles` filter (administrators by
 *   default) on activation and on every schema upgrade; nobody else sees it;
 * - what is said of invoices below holds of credit notes alike (a credit
 *   note is a corrective invoice: a number of its own series);
 * - an invoice post is created only by the payment flow; its title is the
 *   number as issued and never changes; it is never trashed or deleted by
 *   anyone (the capability is refused and the core functions are stopped),
 *   except by uninstall when the owner opted in. "Void with a reason" takes
 *   its place: the registry row is marked void and the post says so.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * Invoice post type.
 */
final class Counterfoil_Invoice_Type {
	/** The invoices' post type: one post per issued number, its title the number; nobody edits, trashes or deletes one. */
	const POST_TYPE = 'counterfoil_invoice';
	/** The credit notes' post type (same capabilities, same protection). */
	const CREDIT_NOTE_TYPE = 'counterfoil_cnote';
	/** The post type before schema version 3 (migrated when it carries our meta). */
	const OLD_POST_TYPE = 'invoice';
	/** Meta holding a void invoice's reason. */
	const VOID_META = '_counterfoil_void_reason';
	/**
	 * The meta of an invoice or credit note that no class constant names,
	 * and what each holds (docs/reference.md is generated from this list).
	 */
	const META_KEYS = array(
		'_counterfoil_scope_key'      => 'The series (scope key) of its number, such as 42:2026.',
		'_counterfoil_number'         => 'Its number in the series (the integer; the title is the rendered number).',
		'_counterfoil_gateway'        => 'The payment\'s gateway (a credit note: the refund\'s).',
		'_counterfoil_transaction_id' => 'The payment\'s transaction id (a credit note: the refund id).',
		'_counterfoil_amount'         => 'The amount paid (a credit note: credited), a decimal string.',
		'_counterfoil_currency'       => 'Its currency (ISO 4217).',
		'_counterfoil_refers_to'      => 'A credit note\'s invoice (post id).',
		'_counterfoil_refers_scope'   => 'A credit note\'s invoice\'s series.',
		'_counterfoil_refers_number'  => 'A credit note\'s invoice\'s number in its series.',
		'_counterfoil_refers_to_number' => 'A credit note\'s adopted invoice (issued by another plugin before Counterfoil, no post of ours): its number as issued.',
		'_counterfoil_refers_to_date'   => 'A credit note\'s adopted invoice: its issue date (Y-m-d).',
		'_counterfoil_reason'         => 'Why the credit note was issued (the refund\'s reason).',
	);

	/** @var bool True while remove_orphan() deletes a post that was never issued. */
	private static $removing_orphan = false;

	/** The primitive capabilities of the post type that the roles receive. */
	const CAPS = array(
		'edit_counterfoil_invoices',
		'edit_others_counterfoil_invoices',
		'edit_published_counterfoil_invoices',
		'read_private_counterfoil_invoices',
	);

	/** Hooks. */
	public static function init() {
		add_action( 'init', array( __CLASS__, 'register' ) );
		add_filter( 'map_meta_cap', array( __CLASS__, 'map_meta_cap' ), 10, 4 );
		add_filter( 'pre_trash_post', array( __CLASS__, 'refuse_removal' ), 10, 2 );
		add_filter( 'pre_delete_post', array( __CLASS__, 'refuse_removal' ), 10, 2 );
		add_filter( 'wp_insert_post_data', array( __CLASS__, 'keep_title' ), 10, 2 );
		add_filter( 'post_row_actions', array( __CLASS__, 'row_actions' ), 10, 2 );
		foreach ( array( self::POST_TYPE, self::CREDIT_NOTE_TYPE ) as $type ) {
			add_filter( 'bulk_actions-edit-' . $type, '__return_empty_array' );
			add_filter( 'manage_' . $type . '_posts_columns', array( __CLASS__, 'columns' ) );
			add_action( 'manage_' . $type . '_posts_custom_column', array( __CLASS__, 'column' ), 10, 2 );
		}
	}

	/** Whether $post_type is one of ours (an invoice or a credit note). */
	public static function is_ours( $post_type ) {
		return self::POST_TYPE === $post_type || self::CREDIT_NOTE_TYPE === $post_type;
	}

	/** The post type of the documents series $scope numbers. */
	public static function type_of_series( $scope ) {
		return 'credit_note' === Counterfoil_Rules::kind_of( (string) $scope ) ? self::CREDIT_NOTE_TYPE : self::POST_TYPE;
	}

	/** Registers the post type. */
	public static function register() {
		register_post_type(
			self::POST_TYPE,
			array(
				'labels'          => array(
					'name'          => __( 'Invoices', 'counterfoil' ),
					'singular_name' => __( 'Invoice', 'counterfoil' ),
					'not_found'     => __( 'No invoices yet: they are created by payments.', 'counterfoil' ),
				),
				'public'          => false,
				'show_ui'         => true,
				'show_in_menu'    => true,
				'show_in_rest'    => false,
				'menu_icon'       => 'dashicons-media-spreadsheet',
				'supports'        => array( 'title' ),
				'capability_type' => array( 'counterfoil_invoice', 'counterfoil_invoices' ),
				'capabilities'    => array( 'create_posts' => 'do_not_allow' ),
				'map_meta_cap'    => true,
			)
		);
		register_post_type(
			self::CREDIT_NOTE_TYPE,
			array(
				'labels'          => array(
					'name'          => __( 'Credit notes', 'counterfoil' ),
					'singular_name' => __( 'Credit note', 'counterfoil' ),
					'menu_name'     => __( 'Credit notes', 'counterfoil' ),
					'all_items'     => __( 'Credit notes', 'counterfoil' ),
					'not_found'     => __( 'No credit notes yet: they are issued for refunds.', 'counterfoil' ),
				),
				'public'          => false,
				'show_ui'         => true,
				'show_in_menu'    => 'edit.php?post_type=' . self::POST_TYPE,
				'show_in_rest'    => false,
				'supports'        => array( 'title' ),
				'capability_type' => array( 'counterfoil_invoice', 'counterfoil_invoices' ),
				'capabilities'    => array( 'create_posts' => 'do_not_allow' ),
				'map_meta_cap'    => true,
			)
		);
	}

	/** The roles that see and void invoices. */
	public static function roles() {
		/**
		 * Roles granted the invoice capabilities (e.g. add 'shop_manager').
		 *
		 * @param string[] $roles Role names.
		 */
		return (array) apply_filters( 'counterfoil_invoice_roles', array( 'administrator' ) );
	}

	/** Grants the capabilities to the roles (activation and upgrades). */
	public static function grant() {
		foreach ( self::roles() as $name ) {
			$role = get_role( $name );
			if ( $role ) {
				foreach ( self::CAPS as $cap ) {
					$role->add_cap( $cap );
				}
			}
		}
	}

	/**
	 * Our posts of the old type `invoice` (those with our meta) become
	 * `counterfoil_invoice`; other plugins' `invoice` posts are left alone.
	 *
	 * @return int Posts migrated.
	 */
	public static function migrate_old_posts() {
		global $wpdb;
		$moved = $wpdb->query( // phpcs:ignore WordPress.DB.DirectDatabaseQuery.DirectQuery, WordPress.DB.DirectDatabaseQuery.NoCaching -- a one-off migration in one statement (the object cache is flushed below).
			$wpdb->prepare(
				"UPDATE {$wpdb->posts} p JOIN {$wpdb->postmeta} m ON m.post_id = p.ID AND m.meta_key = '_counterfoil_scope_key'
				 SET p.post_type = %s WHERE p.post_type = %s",
				self::POST_TYPE,
				self::OLD_POST_TYPE
			)
		);
		if ( $moved ) {
			wp_cache_flush();
		}
		return (int) $moved;
	}

	/**
	 * The URL of one of the plugin's pages under Invoices, about a post.
	 *
	 * @param string $slug    The page's slug.
	 * @param int    $post_id The invoice or credit note.
	 * @return string
	 */
	public static function page_url( $slug, $post_id ) {
		return add_query_arg(
			array(
				'post_type' => self::POST_TYPE,
				'page'      => $slug,
				'invoice'   => (int) $post_id,
			),
			admin_url( 'edit.php' )
		);
	}

	/**
	 * Nobody edits, trashes or deletes an invoice; reading is for the roles.
	 *
	 * @param string[] $caps    Primitive caps.
	 * @param string   $cap     Meta cap.
	 * @param int      $user_id User.
	 * @param array    $args    Post id first.
	 * @return string[]
	 */
	public static function map_meta_cap( $caps, $cap, $user_id, $args ) {
		if ( ! in_array( $cap, array( 'edit_post', 'delete_post', 'publish_post' ), true ) || empty( $args[0] ) ) {
			return $caps;
		}
		$post = get_post( (int) $args[0] );
		if ( ! $post || ! self::is_ours( $post->post_type ) ) {
			return $caps;
		}
		return array( 'do_not_allow' );
	}

	/**
	 * Stops wp_trash_post() and wp_delete_post() on an invoice, whoever
	 * calls them (this plugin's own uninstall, with the owner's opt-in,
	 * excepted: another plugin's uninstall lifts nothing).
	 *
	 * @param mixed   $check Null to go on.
	 * @param WP_Post $post  Post.
	 * @return mixed
	 */
	public static function refuse_removal( $check, $post ) {
		if ( $post && self::is_ours( $post->post_type ) && ! self::$removing_orphan && ! self::uninstalling_counterfoil() ) {
			return false;
		}
		return $check;
	}

	/** Whether this request is this plugin's own uninstall. */
	private static function uninstalling_counterfoil() {
		return defined( 'WP_UNINSTALL_PLUGIN' ) && plugin_basename( COUNTERFOIL_FILE ) === WP_UNINSTALL_PLUGIN;
	}

	/**
	 * An invoice's title is its number as issued: an update keeps it.
	 *
	 * @param array $data    Post data to be saved.
	 * @param array $postarr The request.
	 * @return array
	 */
	public static function keep_title( $data, $postarr ) {
		if ( empty( $postarr['ID'] ) ) {
			return $data;
		}
		$old = get_post( (int) $postarr['ID'] );
		if ( $old && self::is_ours( $old->post_type ) ) {
			$data['post_type']   = $old->post_type;
			$data['post_title']  = $old->post_title;
			$data['post_status'] = $old->post_status;
		}
		return $data;
	}

	/**
	 * The list's row actions: "Void…" for those who may void numbers.
	 *
	 * @param array   $actions Actions.
	 * @param WP_Post $post    Post.
	 * @return array
	 */
	public static function row_actions( $actions, $post ) {
		if ( ! self::is_ours( $post->post_type ) ) {
			return $actions;
		}
		$actions = array();
		$scope   = get_post_meta( $post->ID, '_counterfoil_scope_key', true );
		$number  = get_post_meta( $post->ID, '_counterfoil_number', true );
		if ( current_user_can( Counterfoil_Admin::CAPABILITY ) && '' === (string) get_post_meta( $post->ID, self::VOID_META, true ) && '' !== $scope ) {
			$url               = add_query_arg(
				array(
					'page'        => Counterfoil_Admin::SLUG,
					'void_scope'  => rawurlencode( $scope ),
					'void_number' => rawurlencode( $number ),
				),
				admin_url( 'options-general.php' )
			) . '#counterfoil-void';
			$actions['void'] = '<a href="' . esc_url( $url ) . '">' . esc_html__( 'Void with a reason…', 'counterfoil' ) . '</a>';
		}
		if ( self::POST_TYPE === $post->post_type && current_user_can( Counterfoil_Admin::CAPABILITY ) && '' === (string) get_post_meta( $post->ID, self::VOID_META, true ) ) {
			$actions['credit_note'] = '<a href="' . esc_url( Counterfoil_Credit_Note_Admin::url( $post->ID ) ) . '">' . esc_html__( 'Issue credit note…', 'counterfoil' ) . '</a>';
		}
		return $actions;
	}

	/**
	 * List columns: the status beside the title.
	 *
	 * @param array $columns Columns.
	 * @return array
	 */
	public static function columns( $columns ) {
		$columns['counterfoil_status']  = __( 'Status', 'counterfoil' );
		$columns['counterfoil_related'] = __( 'Credit notes / corrects', 'counterfoil' );
		return $columns;
	}

	/**
	 * Prints a column.
	 *
	 * @param string $column  Column.
	 * @param int    $post_id Post.
	 */
	public static function column( $column, $post_id ) {
		if ( 'counterfoil_related' === $column ) {
			echo esc_html( implode( ', ', Counterfoil_Credit_Notes::related_titles( $post_id ) ) );
			return;
		}
		if ( 'counterfoil_status' !== $column ) {
			return;
		}
		$reason = (string) get_post_meta( $post_id, self::VOID_META, true );
		if ( '' === $reason ) {
			echo esc_html__( 'issued', 'counterfoil' );
			return;
		}
		/* translators: %s: reason */
		echo esc_html( sprintf( __( 'void: %s', 'counterfoil' ), $reason ) );
	}

	/**
	 * Deletes a post this process inserted for a number whose claim it then
	 * lost (another delivery took the claim over and issued the number with
	 * its own post): that post was never issued to anyone.
	 *
	 * @param int $post_id Post.
	 */
	public static function remove_orphan( $post_id ) {
		self::$removing_orphan = true;
		try {
			wp_delete_post( $post_id, true );
		} finally {
			self::$removing_orphan = false;
		}
	}

	/**
	 * Marks the invoice post of a voided number as void (the registry row is
	 * the record; this makes the list say so).
	 *
	 * @param int    $post_id Post.
	 * @param string $reason  Why.
	 */
	public static function mark_void( $post_id, $reason ) {
		if ( $post_id && get_post( $post_id ) ) {
			update_post_meta( $post_id, self::VOID_META, $reason );
		}
	}
}
