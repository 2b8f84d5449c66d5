/** The per-App audit log query. (Being built.) */
import type { AppContext } from "../../context";
import type { AuthService } from "./service";

export class AuditQueryService {
  constructor(
    private readonly ctx: AppContext,
    private readonly auth: AuthService,
  ) {}
}
