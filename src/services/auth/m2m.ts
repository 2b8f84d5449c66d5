/** M2M clients and the client_credentials grant. (Being built.) */
import type { AppContext } from "../../context";
import type { AuthService } from "./service";

export class M2mService {
  constructor(
    private readonly ctx: AppContext,
    private readonly auth: AuthService,
  ) {}
}
