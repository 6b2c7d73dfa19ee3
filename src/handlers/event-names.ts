/**
 * The event types each provider documents, as the router names them, for the providers whose names are not
 * read from a package (Stripe's and GitHub's are generated: ./generated/). Written from the providers'
 * public webhook references; a type missing here can still be handled with `<provider>:*` or `onAny`.
 */

/** Shopify webhook topics (`X-Shopify-Topic`). */
export type ShopifyTopic =
  | 'app/uninstalled' | 'app/scopes_update' | 'app_subscriptions/update' | 'app_subscriptions/approaching_capped_amount'
  | 'app_purchases_one_time/update' | 'bulk_operations/finish'
  | 'carts/create' | 'carts/update' | 'checkouts/create' | 'checkouts/update' | 'checkouts/delete'
  | 'collections/create' | 'collections/update' | 'collections/delete'
  | 'customers/create' | 'customers/update' | 'customers/delete' | 'customers/enable' | 'customers/disable'
  | 'customers/data_request' | 'customers/redact' | 'customers_email_marketing_consent/update'
  | 'customers_marketing_consent/update' | 'customer_groups/create' | 'customer_groups/update' | 'customer_groups/delete'
  | 'disputes/create' | 'disputes/update' | 'domains/create' | 'domains/update' | 'domains/destroy'
  | 'draft_orders/create' | 'draft_orders/update' | 'draft_orders/delete'
  | 'fulfillments/create' | 'fulfillments/update' | 'fulfillment_events/create' | 'fulfillment_events/delete'
  | 'fulfillment_orders/cancelled' | 'fulfillment_orders/fulfillment_request_accepted' | 'fulfillment_orders/hold_released'
  | 'fulfillment_orders/moved' | 'fulfillment_orders/placed_on_hold' | 'fulfillment_orders/ready_to_fulfill'
  | 'inventory_items/create' | 'inventory_items/update' | 'inventory_items/delete'
  | 'inventory_levels/connect' | 'inventory_levels/update' | 'inventory_levels/disconnect'
  | 'locales/create' | 'locales/update'
  | 'locations/create' | 'locations/update' | 'locations/delete' | 'locations/activate' | 'locations/deactivate'
  | 'markets/create' | 'markets/update' | 'markets/delete' | 'order_transactions/create'
  | 'orders/create' | 'orders/updated' | 'orders/paid' | 'orders/cancelled' | 'orders/fulfilled'
  | 'orders/partially_fulfilled' | 'orders/delete' | 'orders/edited'
  | 'product_listings/add' | 'product_listings/update' | 'product_listings/remove'
  | 'products/create' | 'products/update' | 'products/delete' | 'refunds/create'
  | 'returns/request' | 'returns/approve' | 'returns/decline' | 'returns/cancel' | 'returns/close' | 'returns/reopen'
  | 'selling_plan_groups/create' | 'selling_plan_groups/update' | 'selling_plan_groups/delete'
  | 'shop/update' | 'shop/redact' | 'subscription_contracts/create' | 'subscription_contracts/update'
  | 'tender_transactions/create' | 'themes/create' | 'themes/update' | 'themes/delete' | 'themes/publish'

/**
 * Slack: Events API event types (the inner `event.type`, or the outer `type` for `app_rate_limited`),
 * interactivity payload types, and `slash_command` for slash commands. `url_verification` is answered by the
 * ingress and never reaches a handler.
 */
export type SlackEventType =
  | 'app_home_opened' | 'app_mention' | 'app_rate_limited' | 'app_requested' | 'app_uninstalled'
  | 'assistant_thread_context_changed' | 'assistant_thread_started'
  | 'channel_archive' | 'channel_created' | 'channel_deleted' | 'channel_history_changed' | 'channel_id_changed'
  | 'channel_left' | 'channel_rename' | 'channel_shared' | 'channel_unarchive' | 'channel_unshared'
  | 'dnd_updated' | 'dnd_updated_user' | 'email_domain_changed' | 'emoji_changed'
  | 'file_change' | 'file_created' | 'file_deleted' | 'file_public' | 'file_shared' | 'file_unshared'
  | 'function_executed' | 'grid_migration_finished' | 'grid_migration_started'
  | 'group_archive' | 'group_close' | 'group_deleted' | 'group_history_changed' | 'group_left' | 'group_open'
  | 'group_rename' | 'group_unarchive' | 'im_close' | 'im_created' | 'im_history_changed' | 'im_open'
  | 'invite_requested' | 'link_shared' | 'member_joined_channel' | 'member_left_channel' | 'message'
  | 'message_metadata_deleted' | 'message_metadata_posted' | 'message_metadata_updated'
  | 'pin_added' | 'pin_removed' | 'reaction_added' | 'reaction_removed'
  | 'shared_channel_invite_accepted' | 'shared_channel_invite_approved' | 'shared_channel_invite_declined'
  | 'shared_channel_invite_received' | 'star_added' | 'star_removed'
  | 'subteam_created' | 'subteam_members_changed' | 'subteam_self_added' | 'subteam_self_removed' | 'subteam_updated'
  | 'team_access_granted' | 'team_access_revoked' | 'team_domain_change' | 'team_join' | 'team_rename'
  | 'tokens_revoked' | 'user_change' | 'user_huddle_changed' | 'user_profile_changed' | 'user_status_changed'
  | 'workflow_deleted' | 'workflow_published' | 'workflow_step_deleted' | 'workflow_unpublished'
  // Interactivity (form-encoded `payload`) and slash commands.
  | 'block_actions' | 'block_suggestion' | 'dialog_submission' | 'interactive_message' | 'message_action'
  | 'shortcut' | 'view_closed' | 'view_submission' | 'slash_command'

/** Paddle Billing notification event types (`event_type`). */
export type PaddleEventType =
  | 'address.created' | 'address.updated' | 'address.imported'
  | 'adjustment.created' | 'adjustment.updated'
  | 'api_key.created' | 'api_key.updated' | 'api_key.expiring' | 'api_key.expired' | 'api_key.revoked'
  | 'business.created' | 'business.updated' | 'business.imported'
  | 'client_token.created' | 'client_token.updated' | 'client_token.revoked'
  | 'customer.created' | 'customer.updated' | 'customer.imported'
  | 'discount.created' | 'discount.updated' | 'discount.imported' | 'discount_group.created' | 'discount_group.updated'
  | 'payment_method.saved' | 'payment_method.deleted' | 'payout.created' | 'payout.paid'
  | 'price.created' | 'price.updated' | 'price.imported' | 'product.created' | 'product.updated' | 'product.imported'
  | 'report.created' | 'report.updated'
  | 'subscription.activated' | 'subscription.canceled' | 'subscription.created' | 'subscription.imported'
  | 'subscription.past_due' | 'subscription.paused' | 'subscription.resumed' | 'subscription.trialing' | 'subscription.updated'
  | 'transaction.billed' | 'transaction.canceled' | 'transaction.completed' | 'transaction.created' | 'transaction.paid'
  | 'transaction.past_due' | 'transaction.payment_failed' | 'transaction.ready' | 'transaction.revised' | 'transaction.updated'

/** Linear: the data-change entities (`Linear-Event`), each with its `action`; and the other webhook types. */
type LinearEntity =
  | 'Issue' | 'Comment' | 'IssueLabel' | 'Reaction' | 'Project' | 'ProjectUpdate' | 'Cycle' | 'Document'
  | 'Initiative' | 'InitiativeUpdate' | 'Attachment' | 'Customer' | 'CustomerNeed' | 'User'
export type LinearEventType =
  | LinearEntity | `${LinearEntity}.${'create' | 'update' | 'remove'}`
  | 'IssueSLA' | 'IssueSLA.set' | 'IssueSLA.highRisk' | 'IssueSLA.breached'
  | 'OAuthApp' | 'OAuthApp.revoked' | 'AppUserNotification' | 'PermissionChange' | 'AuditEntry'

/** Square webhook event types (`type`). */
export type SquareEventType =
  | 'bank_account.created' | 'bank_account.disabled' | 'bank_account.verified'
  | 'booking.created' | 'booking.updated'
  | 'card.automatically_updated' | 'card.created' | 'card.disabled' | 'card.forgotten' | 'card.updated'
  | 'catalog.version.updated' | 'customer.created' | 'customer.deleted' | 'customer.updated'
  | 'device.code.paired' | 'dispute.created' | 'dispute.evidence.added' | 'dispute.evidence.removed' | 'dispute.state.updated'
  | 'gift_card.activity.created' | 'gift_card.created' | 'gift_card.customer_linked' | 'gift_card.updated'
  | 'inventory.count.updated'
  | 'invoice.canceled' | 'invoice.created' | 'invoice.deleted' | 'invoice.payment_made' | 'invoice.published'
  | 'invoice.refunded' | 'invoice.scheduled_charge_failed' | 'invoice.updated'
  | 'labor.shift.created' | 'labor.shift.deleted' | 'labor.shift.updated'
  | 'location.created' | 'location.updated' | 'loyalty.account.created' | 'loyalty.account.updated' | 'loyalty.event.created'
  | 'oauth.authorization.revoked' | 'order.created' | 'order.fulfillment.updated' | 'order.updated'
  | 'payment.created' | 'payment.updated' | 'payout.failed' | 'payout.paid' | 'payout.sent'
  | 'refund.created' | 'refund.updated' | 'subscription.created' | 'subscription.updated'
  | 'team_member.created' | 'team_member.updated' | 'terminal.checkout.created' | 'terminal.checkout.updated'
  | 'terminal.refund.created' | 'terminal.refund.updated'

/** Zoom event types (`event`); `endpoint.url_validation` is answered by the ingress and never reaches a handler. */
export type ZoomEventType =
  | 'app_deauthorized'
  | 'meeting.created' | 'meeting.updated' | 'meeting.deleted' | 'meeting.started' | 'meeting.ended'
  | 'meeting.participant_joined' | 'meeting.participant_left' | 'meeting.participant_joined_waiting_room'
  | 'meeting.participant_admitted' | 'meeting.registration_created' | 'meeting.sharing_started' | 'meeting.sharing_ended'
  | 'recording.started' | 'recording.paused' | 'recording.resumed' | 'recording.stopped' | 'recording.completed'
  | 'recording.transcript_completed' | 'recording.trashed' | 'recording.deleted' | 'recording.recovered'
  | 'user.created' | 'user.updated' | 'user.deleted' | 'user.activated' | 'user.deactivated'
  | 'user.presence_status_updated' | 'user.signed_in' | 'user.signed_out'
  | 'webinar.created' | 'webinar.updated' | 'webinar.deleted' | 'webinar.started' | 'webinar.ended'
  | 'webinar.participant_joined' | 'webinar.participant_left' | 'webinar.registration_created'

/** GitLab event headers (`X-Gitlab-Event`). */
export type GitlabEventType =
  | 'Push Hook' | 'Tag Push Hook' | 'Issue Hook' | 'Confidential Issue Hook' | 'Note Hook' | 'Confidential Note Hook'
  | 'Merge Request Hook' | 'Wiki Page Hook' | 'Pipeline Hook' | 'Job Hook' | 'Deployment Hook' | 'Feature Flag Hook'
  | 'Release Hook' | 'Emoji Hook' | 'Milestone Hook' | 'Member Hook' | 'Project Hook' | 'Subgroup Hook'
  | 'Resource Access Token Hook' | 'Vulnerability Hook' | 'System Hook'

/** SendGrid Event Webhook event types (`event` of each event in the batch). */
export type SendgridEventType =
  | 'processed' | 'dropped' | 'delivered' | 'deferred' | 'bounce'
  | 'open' | 'click' | 'spamreport' | 'unsubscribe' | 'group_unsubscribe' | 'group_resubscribe'

/**
 * Discord: interactions by their `InteractionType` name (the router names type 2 `APPLICATION_COMMAND`, and
 * so on; PING is answered by the ingress), and webhook events by their `event.type`.
 */
export type DiscordEventType =
  | 'APPLICATION_COMMAND' | 'MESSAGE_COMPONENT' | 'APPLICATION_COMMAND_AUTOCOMPLETE' | 'MODAL_SUBMIT'
  | 'APPLICATION_AUTHORIZED' | 'APPLICATION_DEAUTHORIZED' | 'ENTITLEMENT_CREATE' | 'QUEST_USER_ENROLLMENT'
