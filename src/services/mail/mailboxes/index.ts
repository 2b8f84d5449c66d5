/**
 * What the other mail parts use of mailboxes: the store operations the inbound part runs
 * when it delivers a received message into a mailbox (in its own transaction, with the
 * message's other rows) and when it purges what retention let go of.
 */
export {
  deleteEmptyDeletedMailboxes,
  deleteReceived,
  insertReceived,
  mailboxTargets,
  nextMessageSeq,
  objectKeysOfWorkspace,
  purgeCandidates,
  testAddressDomains,
  unreferencedKeys,
  type MailboxTarget,
  type ReceivedRow,
} from "./store";
