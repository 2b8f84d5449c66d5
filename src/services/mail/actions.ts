/**
 * The mail service's policy actions. Admins and owners hold mail.* (the built-in admin role);
 * the member role reads domains, brand, templates and the message log, but not bodies
 * (mail.message.body.read) and cannot delete (migration 0050).
 */
export const MAIL_ACTIONS = [
  { name: "mail.domain.read", description: "List and read sending domains and their DNS checks" },
  { name: "mail.domain.write", description: "Add, verify, change and delete sending domains; rotate DKIM keys" },
  { name: "mail.brand.read", description: "Read the brand used by templates" },
  { name: "mail.brand.write", description: "Change or reset the brand" },
  { name: "mail.template.read", description: "List, read, render, preview and lint templates" },
  { name: "mail.template.write", description: "Create, change and delete templates" },
  { name: "mail.send", description: "Send mail (send, send-batch, test-send)" },
  { name: "mail.message.read", description: "Read the message log, its export, timeline and the deliverability verdict" },
  { name: "mail.message.body.read", description: "Read message bodies, raw messages, attachments and previews of content" },
  { name: "mail.message.delete", description: "Delete messages (right to be forgotten) and change message settings" },
  { name: "mail.mailbox.read", description: "List and read mailboxes and their received messages (metadata), mark messages read" },
  { name: "mail.mailbox.write", description: "Create, change and delete mailboxes" },
  { name: "mail.suppression.read", description: "List suppressed recipients" },
  { name: "mail.suppression.write", description: "Add and remove suppressed recipients" },
] as const;
