<?php
use PHPUnit\Framework\TestCase;

/**
 * The invoice post type: prefixed, its own capabilities, an issued invoice
 * is never retitled, trashed or deleted (void with a reason instead); our old
 * `invoice` posts are migrated and other plugins' are not.
 */
final class InvoiceTypeTest extends TestCase {
	protected function tearDown(): void {
		wp_set_current_user( 0 );
	}

	private function invoice() {
		$u = Counterfoil_Test::user();
		initialize_invoice_sequence( $u, 2026, 1 );
		$post = counterfoil_create_invoice_for_payment(
			array(
				'gateway'        => 'stripe',
				'transaction_id' => "type-$u",
				'user_id'        => $u,
				'year'           => 2026,
			)
		);
		$this->assertInstanceOf( WP_Post::class, $post );
		return $post;
	}

	private function user_with_role( $role ) {
		$id = wp_insert_user(
			array(
				'user_login' => $role . '-' . wp_generate_password( 8, false ),
				'user_pass'  => wp_generate_password(),
				'role'       => $role,
			)
		);
		$this->assertIsInt( $id );
		return $id;
	}

	public function test_the_post_type_is_prefixed_with_its_own_capabilities() {
		$post = $this->invoice();
		$this->assertSame( 'counterfoil_invoice', $post->post_type );
		$type = get_post_type_object( 'counterfoil_invoice' );
		$this->assertSame( 'edit_counterfoil_invoices', $type->cap->edit_posts );
		$this->assertSame( 'do_not_allow', $type->cap->create_posts );
		foreach ( array( 'editor', 'author', 'contributor', 'subscriber' ) as $role ) {
			wp_set_current_user( $this->user_with_role( $role ) );
			$this->assertFalse( current_user_can( $type->cap->edit_posts ), "$role sees the invoice list" );
			$this->assertFalse( current_user_can( 'edit_post', $post->ID ), "$role may edit an invoice" );
			$this->assertFalse( current_user_can( 'delete_post', $post->ID ), "$role may delete an invoice" );
		}
		wp_set_current_user( get_user_by( 'login', 'admin' )->ID );
		$this->assertTrue( current_user_can( $type->cap->edit_posts ), 'the administrator sees the list' );
		$this->assertFalse( current_user_can( 'edit_post', $post->ID ), 'not even the administrator retitles an invoice' );
		$this->assertFalse( current_user_can( 'delete_post', $post->ID ), 'not even the administrator deletes an invoice' );
	}

	public function test_the_issuer_as_author_cannot_delete_their_own_invoice() {
		$author = $this->user_with_role( 'author' );
		initialize_invoice_sequence( $author, 2026, 1 );
		$post = counterfoil_create_invoice_for_payment( array( 'gateway' => 'stripe', 'transaction_id' => "own-$author", 'user_id' => $author, 'year' => 2026 ) );
		$this->assertSame( $author, (int) $post->post_author );
		wp_set_current_user( $author );
		$this->assertFalse( current_user_can( 'delete_post', $post->ID ) );
		$this->assertFalse( current_user_can( 'edit_post', $post->ID ) );
	}

	public function test_no_code_path_trashes_deletes_or_retitles_an_invoice() {
		$post = $this->invoice();
		$this->assertFalse( (bool) wp_trash_post( $post->ID ) );
		$this->assertFalse( (bool) wp_delete_post( $post->ID, true ) );
		wp_update_post( array( 'ID' => $post->ID, 'post_title' => 'edited', 'post_status' => 'draft' ) );
		clean_post_cache( $post->ID );
		$after = get_post( $post->ID );
		$this->assertSame( $post->post_title, $after->post_title );
		$this->assertSame( 'publish', $after->post_status );
		// A repeated delivery still answers with the invoice.
		$again = counterfoil_create_invoice_for_payment( array( 'gateway' => 'stripe', 'transaction_id' => get_post_meta( $post->ID, '_counterfoil_transaction_id', true ), 'user_id' => (int) strtok( get_post_meta( $post->ID, '_counterfoil_scope_key', true ), ':' ), 'year' => 2026 ) );
		$this->assertInstanceOf( WP_Post::class, $again, is_wp_error( $again ) ? $again->get_error_message() : '' );
		$this->assertSame( $post->ID, $again->ID );
	}

	public function test_void_with_a_reason_marks_the_registry_and_the_post() {
		$post   = $this->invoice();
		$scope  = get_post_meta( $post->ID, '_counterfoil_scope_key', true );
		$number = (int) get_post_meta( $post->ID, '_counterfoil_number', true );
		wp_set_current_user( get_user_by( 'login', 'admin' )->ID );
		$actions = apply_filters( 'post_row_actions', array( 'edit' => 'x', 'trash' => 'y' ), $post );
		$this->assertSame( array( 'void', 'credit_note' ), array_keys( $actions ) );
		$this->assertStringContainsString( 'void_number=' . $number, $actions['void'] );
		$this->assertStringContainsString( 'invoice=' . $post->ID, $actions['credit_note'] );
		$this->assertTrue( counterfoil_void_number( $scope, $number, 'issued to the wrong customer' ) );
		$this->assertSame( array(), array_keys( apply_filters( 'post_row_actions', array(), get_post( $post->ID ) ) ), 'a void invoice: neither' );
		$this->assertSame( 'issued to the wrong customer', get_post_meta( $post->ID, '_counterfoil_void_reason', true ) );
		ob_start();
		do_action( 'manage_counterfoil_invoice_posts_custom_column', 'counterfoil_status', $post->ID );
		$this->assertSame( 'void: issued to the wrong customer', ob_get_clean() );
		$this->assertSame( array(), apply_filters( 'post_row_actions', array(), $post ), 'a void invoice offers no void' );
		$this->assertNotNull( get_post( $post->ID ), 'the post stays' );
		$this->assertSame( array(), apply_filters( 'bulk_actions-edit-counterfoil_invoice', array( 'trash' => 'Trash', 'edit' => 'Edit' ) ) );
	}

	public function test_the_upgrade_migrates_our_invoice_posts_only() {
		global $wpdb;
		$ours   = wp_insert_post( array( 'post_type' => 'invoice', 'post_status' => 'publish', 'post_title' => 'ours', 'meta_input' => array( '_counterfoil_scope_key' => '1:2020', '_counterfoil_number' => '1' ) ) );
		$theirs = wp_insert_post( array( 'post_type' => 'invoice', 'post_status' => 'publish', 'post_title' => 'another plugin', 'meta_input' => array( '_their_number' => '7' ) ) );
		update_option( Counterfoil_Schema::VERSION_OPTION, 2 );
		Counterfoil_Schema::maybe_upgrade();
		$type = function ( $id ) use ( $wpdb ) {
			return $wpdb->get_var( $wpdb->prepare( "SELECT post_type FROM {$wpdb->posts} WHERE ID = %d", $id ) );
		};
		$this->assertSame( 'counterfoil_invoice', $type( $ours ) );
		$this->assertSame( 'invoice', $type( $theirs ) );
		$this->assertSame( Counterfoil_Schema::VERSION, (int) get_option( Counterfoil_Schema::VERSION_OPTION ) );
		$this->assertTrue( get_role( 'administrator' )->has_cap( 'edit_counterfoil_invoices' ) );
		$this->assertFalse( get_role( 'editor' )->has_cap( 'edit_counterfoil_invoices' ) );
	}

	public function test_shop_managers_can_be_granted_the_invoices() {
		add_role( 'shop_manager', 'Shop manager', array( 'read' => true ) );
		$grant = function ( $roles ) {
			$roles[] = 'shop_manager';
			return $roles;
		};
		add_filter( 'counterfoil_invoice_roles', $grant );
		try {
			Counterfoil_Invoice_Type::grant();
			$this->assertTrue( get_role( 'shop_manager' )->has_cap( 'edit_counterfoil_invoices' ) );
		} finally {
			remove_filter( 'counterfoil_invoice_roles', $grant );
			remove_role( 'shop_manager' );
		}
	}
}
