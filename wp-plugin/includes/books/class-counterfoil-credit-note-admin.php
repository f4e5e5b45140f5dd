<?php
/**
 * Invoices → Issue credit note: an invoice's credit notes, what is left to
 * credit, and the form that issues one by hand (a refund paid outside a
 * gateway, a price reduction).
 *
 * Invariants: the page and the form need the plugin's capability
 * (Counterfoil_Admin::CAPABILITY) and the form a nonce; the form carries a
 * key made when the page was drawn (`admin-{uuid}`), the refund id of the
 * credit note, so a form sent twice (a double click, a reload) issues one
 * credit note; the credit note itself is Counterfoil_Credit_Notes'.
 *
 * @package Counterfoil
 */

defined( 'ABSPATH' ) || exit;

/**
 * The credit-note page.
 */
final class Counterfoil_Credit_Note_Admin {
	const SLUG    = 'counterfoil-credit-note';
	const ACTION  = 'counterfoil_issue_credit_note';
	const GATEWAY = 'admin';

	/** Hooks. */
	public static function init() {
		add_action( 'admin_menu', array( __CLASS__, 'menu' ) );
		add_action( 'admin_post_' . self::ACTION, array( __CLASS__, 'handle' ) );
	}

	/** The page, under Invoices. */
	public static function menu() {
		add_submenu_page(
			'edit.php?post_type=' . Counterfoil_Invoice_Type::POST_TYPE,
			__( 'Issue credit note', 'counterfoil' ),
			__( 'Issue credit note', 'counterfoil' ),
			Counterfoil_Admin::CAPABILITY,
			self::SLUG,
			array( __CLASS__, 'render' )
		);
	}

	/** The page's URL for invoice $post_id. */
	public static function url( $post_id ) {
		return Counterfoil_Invoice_Type::page_url( self::SLUG, $post_id );
	}

	/** Issues the credit note the form asks for, then back to the page. */
	public static function handle() {
		Counterfoil_Admin::guard( 'issue_credit_note' );
		// phpcs:disable WordPress.Security.NonceVerification.Missing -- checked in Counterfoil_Admin::guard() above.
		$invoice = isset( $_POST['invoice_id'] ) ? absint( $_POST['invoice_id'] ) : 0;
		$key     = isset( $_POST['refund_key'] ) ? sanitize_key( wp_unslash( $_POST['refund_key'] ) ) : '';
		$amount  = isset( $_POST['amount'] ) ? trim( sanitize_text_field( wp_unslash( $_POST['amount'] ) ) ) : '';
		$reason  = isset( $_POST['reason'] ) ? trim( sanitize_text_field( wp_unslash( $_POST['reason'] ) ) ) : '';
		// phpcs:enable WordPress.Security.NonceVerification.Missing
		if ( ! preg_match( '/^[0-9a-f-]{36}$/', $key ) ) {
			self::back( $invoice, 'error', __( 'The form is incomplete; reload the page and try again.', 'counterfoil' ) );
		}
		if ( '' === $reason ) {
			self::back( $invoice, 'error', __( 'A credit note needs a reason (it is printed on it).', 'counterfoil' ) );
		}
		$result = Counterfoil_Credit_Notes::for_refund(
			array(
				'gateway'    => self::GATEWAY,
				'refund_id'  => self::GATEWAY . '-' . $key,
				'invoice_id' => $invoice,
				'amount'     => $amount,
				'reason'     => $reason,
			)
		);
		if ( is_wp_error( $result ) ) {
			self::back( $invoice, 'error', $result->get_error_message() );
		}
		self::back(
			$invoice,
			'success',
			/* translators: 1: credit note number, 2: amount, 3: currency, 4: invoice number */
			sprintf( __( 'Credit note %1$s for %2$s %3$s issued against invoice %4$s.', 'counterfoil' ), $result['number'], $result['amount'], $result['currency'], $result['refers_to'] )
		);
	}

	/** Redirects to the invoice's page with a notice. */
	private static function back( $invoice, $type, $message ) {
		set_transient( 'counterfoil_notice_' . get_current_user_id(), array( $type, $message ), 60 );
		wp_safe_redirect( self::url( $invoice ) );
		exit;
	}

	/** The page. */
	public static function render() {
		if ( ! current_user_can( Counterfoil_Admin::CAPABILITY ) ) {
			wp_die( esc_html__( 'You are not allowed to issue credit notes.', 'counterfoil' ), 403 );
		}
		$notice = get_transient( 'counterfoil_notice_' . get_current_user_id() );
		delete_transient( 'counterfoil_notice_' . get_current_user_id() );
		$id   = isset( $_GET['invoice'] ) ? absint( $_GET['invoice'] ) : 0; // phpcs:ignore WordPress.Security.NonceVerification.Recommended -- a read-only view.
		$post = $id ? get_post( $id ) : null;
		?>
		<div class="wrap" id="counterfoil-credit-note">
			<h1><?php esc_html_e( 'Issue credit note', 'counterfoil' ); ?></h1>
			<?php if ( $notice ) : ?>
				<div class="notice notice-<?php echo esc_attr( 'success' === $notice[0] ? 'success' : 'error' ); ?> counterfoil-notice"><p><?php echo esc_html( $notice[1] ); ?></p></div>
			<?php endif; ?>
			<?php
			if ( ! $post || Counterfoil_Invoice_Type::POST_TYPE !== $post->post_type ) {
				echo '<p>' . esc_html__( 'Choose the invoice in the invoice list: its row action "Issue credit note…" opens it here.', 'counterfoil' ) . '</p></div>';
				return;
			}
			self::render_invoice( $post );
			?>
		</div>
		<?php
	}

	/** An invoice, its credit notes, what is left, and the form. */
	private static function render_invoice( WP_Post $post ) {
		$scope    = (string) get_post_meta( $post->ID, '_counterfoil_scope_key', true );
		$number   = (int) get_post_meta( $post->ID, '_counterfoil_number', true );
		$amount   = (string) get_post_meta( $post->ID, '_counterfoil_amount', true );
		$currency = (string) get_post_meta( $post->ID, '_counterfoil_currency', true );
		$notes    = Counterfoil_Credit_Notes::of_invoice( $scope, $number );
		$left     = Counterfoil_Credit_Notes::left( $scope, $number, $amount, $currency );
		?>
		<h2 id="counterfoil-credit-note-invoice">
			<?php
			/* translators: 1: invoice number, 2: amount, 3: currency */
			echo esc_html( sprintf( __( 'Invoice %1$s: %2$s %3$s', 'counterfoil' ), $post->post_title, $amount, $currency ) );
			?>
		</h2>
		<table class="widefat striped" id="counterfoil-credit-notes">
			<thead><tr><th><?php esc_html_e( 'Credit note', 'counterfoil' ); ?></th><th><?php esc_html_e( 'Amount', 'counterfoil' ); ?></th><th><?php esc_html_e( 'Reason', 'counterfoil' ); ?></th><th><?php esc_html_e( 'Refund', 'counterfoil' ); ?></th></tr></thead>
			<tbody>
			<?php if ( ! $notes ) : ?>
				<tr><td colspan="4"><?php esc_html_e( 'No credit notes yet.', 'counterfoil' ); ?></td></tr>
			<?php endif; ?>
			<?php foreach ( $notes as $note ) : ?>
				<tr>
					<td><?php echo esc_html( $note->post_id ? get_the_title( (int) $note->post_id ) : __( '(being issued)', 'counterfoil' ) ); ?></td>
					<td><?php echo esc_html( $note->amount . ' ' . $note->currency ); ?></td>
					<td><?php echo esc_html( (string) $note->reason ); ?></td>
					<td><?php echo esc_html( $note->gateway . ' / ' . $note->transaction_id ); ?></td>
				</tr>
			<?php endforeach; ?>
			</tbody>
		</table>
		<?php if ( null === $left ) : ?>
			<p><?php esc_html_e( 'This invoice records no amount: there is nothing to credit against.', 'counterfoil' ); ?></p>
		<?php elseif ( 0 === Counterfoil_Rules::minor_units( $left, $currency ) ) : ?>
			<p id="counterfoil-credit-note-left"><?php esc_html_e( 'Everything is credited: nothing is left.', 'counterfoil' ); ?></p>
		<?php else : ?>
			<p id="counterfoil-credit-note-left">
				<?php
				/* translators: 1: amount, 2: currency */
				echo esc_html( sprintf( __( 'Left to credit: %1$s %2$s', 'counterfoil' ), $left, $currency ) );
				?>
			</p>
			<form method="post" action="<?php echo esc_url( admin_url( 'admin-post.php' ) ); ?>" id="counterfoil-credit-note-form">
				<input type="hidden" name="action" value="<?php echo esc_attr( self::ACTION ); ?>">
				<input type="hidden" name="invoice_id" value="<?php echo esc_attr( (string) $post->ID ); ?>">
				<input type="hidden" name="refund_key" value="<?php echo esc_attr( wp_generate_uuid4() ); ?>">
				<?php wp_nonce_field( self::ACTION ); ?>
				<p><label><?php esc_html_e( 'Amount', 'counterfoil' ); ?> <input type="text" name="amount" value="<?php echo esc_attr( $left ); ?>" size="12" inputmode="decimal"> <?php echo esc_html( $currency ); ?></label></p>
				<p><label><?php esc_html_e( 'Reason', 'counterfoil' ); ?> <input type="text" name="reason" maxlength="255" size="60" required></label></p>
				<?php submit_button( __( 'Issue credit note', 'counterfoil' ) ); ?>
			</form>
		<?php endif; ?>
		<?php
	}
}
