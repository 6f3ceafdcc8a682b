// oidc-provider ships no types (DefinitelyTyped's lag its majors): the little the test peer uses.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  interface OidcContext {
    method: string;
    path: string;
    status: number;
    oidc?: { params?: Record<string, unknown> };
  }
  interface ClientLike {
    grantTypeAllowed(grant: string): boolean;
  }
  interface AccessTokenLike {
    accountId: string;
    scope?: string;
    isExpired: boolean;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    use(middleware: (ctx: OidcContext, next: () => Promise<void>) => Promise<void>): void;
    on(event: string, listener: (...args: unknown[]) => void): void;
    AccessToken: { find(value: string): Promise<AccessTokenLike | undefined> };
  }
  export type { ClientLike };
}
