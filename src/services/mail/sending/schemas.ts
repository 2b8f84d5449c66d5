/** TypeBox models of the sending part's routes (send, send-batch, test-send, send settings). */
import { t } from "../../../core/schema";
import { ErrorBody, JsonObject } from "../../../access/schemas";
import { BATCH_MAX, HEADERS_MAX, RATE_MAX, TO_MAX } from "./service";

export { ErrorBody };

const from = t.String({ description: 'Sender: "addr@domain" or "Name <addr@domain>" on an active sending domain of the workspace', examples: ["Acme <hello@mail.acme.example>"] });
const to = t.Union([t.String({ description: "One email address" }), t.Array(t.String(), { minItems: 1, maxItems: TO_MAX, description: `Up to ${TO_MAX} addresses (one message each)` })]);
const data = JsonObject({ description: "Template variables (validated against the template's variables_schema)" });
const headers = t.Record(t.String(), t.String(), {
  description: `Up to ${HEADERS_MAX} extra headers, e.g. {"List-Unsubscribe": "<https://acme.example/u/1>"}; headers the service writes itself (From, To, Subject, Message-ID, Date, Content-*, DKIM-Signature...) are refused`,
});
const subject = t.String({ description: "Overrides the template's subject (used literally, not rendered)" });

export const SendBody = t.Object({ from, to, data, subject: t.Optional(subject), headers: t.Optional(headers) });
export const TestSendBody = t.Object({ from, to, data: t.Optional(data) });

export const SendAccepted = t.Object({
  accepted: t.Literal(true),
  from: t.String(),
  to: t.Union([t.String(), t.Array(t.String())]),
  subject: t.String({ description: "The subject as sent (rendered or overridden; [TEST]-prefixed for test-send)" }),
  message_ids: t.Array(t.String(), { description: "One message per recipient, in the order of to (see GET /messages/{id})" }),
});

export const BatchBody = t.Object({
  from: t.Optional(t.String({ description: "Default sender of the rows" })),
  subject: t.Optional(t.String({ description: "Default subject override of the rows" })),
  headers: t.Optional(headers),
  messages: t.Array(
    t.Object({
      to: t.String({ description: "One email address" }),
      data,
      from: t.Optional(from),
      subject: t.Optional(subject),
      headers: t.Optional(headers),
      idempotency_key: t.Optional(t.String({ description: "A row with a key used in the last 24 h is accepted with the earlier message's id, not sent again" })),
    }),
    { description: `1-${BATCH_MAX} rows using the same template`, maxItems: BATCH_MAX },
  ),
});

export const BatchResult = t.Object({
  data: t.Array(
    t.Object({
      index: t.Number(),
      status: t.Union([t.Literal("accepted"), t.Literal("rejected")]),
      message_id: t.Nullable(t.String()),
      error: t.Nullable(t.Object({ code: t.String(), message: t.String(), details: t.Optional(t.Array(t.Object({ field: t.String(), reason: t.String() }))) })),
    }),
  ),
  accepted: t.Number(),
  rejected: t.Number(),
});

export const SendSettings = t.Object({
  workspace_id: t.String(),
  rate_limit_per_second: t.Number({ description: "Messages per second accepted by send and send-batch (sliding one-second window)" }),
  custom: t.Boolean({ description: "false while the default (100) applies" }),
});
export const SendSettingsPatch = t.Object({
  rate_limit_per_second: t.Union([t.Integer({ minimum: 1, maximum: RATE_MAX }), t.Null()], { description: `1-${RATE_MAX}; null returns to the default` }),
});
