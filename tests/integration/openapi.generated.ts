// Generated from GET /v1/openapi.json by openapi-typescript: do not edit. Regenerate with `npm run openapi:types`.

export interface paths {
    "/v1/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Service health */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This document */
        get: operations["getOpenApi"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/passports": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the organization's passports */
        get: operations["listPassports"];
        put?: never;
        /**
         * Register an agent or organization passport
         * @description Registers a passport from a public key (JWK or did:key). The passport's DID is the did:key of the key; the service never accepts or holds a private key.
         */
        post: operations["createPassport"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/passports/{did}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a passport */
        get: operations["getPassport"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Set a passport's tiers, name or description */
        patch: operations["updatePassport"];
        trace?: never;
    };
    "/v1/sessions/exchange": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Exchange the caller's token for a session delegation
         * @description Needs only a valid token: the session can only narrow what the caller holds. Rejected with 403 when the caller's passport is below a required tier.
         */
        post: operations["exchangeSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/delegation-tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Issue a delegation token to a passport
         * @description Derives a delegation from the caller's: capabilities and lifetime can only narrow.
         */
        post: operations["createDelegationToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/delegations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List delegations */
        get: operations["listDelegations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/delegations/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a delegation, its ancestry and what was derived from it */
        get: operations["getDelegation"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/delegations/{id}/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Revoke a delegation and everything derived from it */
        post: operations["revokeDelegation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/revocations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List revocation records */
        get: operations["listRevocations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/capabilities/match": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Find the passports whose delegations cover a set of capabilities */
        post: operations["matchCapabilities"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/cp/orgs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List organizations: the caller's own and those it created */
        get: operations["listCpOrgs"];
        put?: never;
        /**
         * Create an organization
         * @description Creates a tenant for an organization passport registered in the caller's organization.
         */
        post: operations["createCpOrg"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/cp/orgs/{org_did}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get an organization */
        get: operations["getCpOrg"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Update an organization
         * @description The caller's own organization or one it created. `deployment_mode`, `autonomy_profile` and `data_residency_tier` are decided by the organization that created it (the root organization decides its own): an organization changing its own gets 403 naming the fields. Its `name` it may change itself.
         */
        patch: operations["updateCpOrg"];
        trace?: never;
    };
    "/v1/provenance": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List provenance records
         * @description The caller's organization's records, newest first, filtered by actor, delegation, grantor, resource, decision, operation and time range.
         */
        get: operations["listProvenance"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/provenance/checkpoint": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The latest signed checkpoint (C2SP tlog-checkpoint in a signed note) */
        get: operations["getProvenanceCheckpoint"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/provenance/verifier-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The note verifier key of the checkpoints' signer (<name>+<key hash>+<base64 key>) */
        get: operations["getProvenanceVerifierKey"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/provenance/consistency": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Consistency proof between two tree sizes */
        get: operations["getProvenanceConsistency"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/provenance/export": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Stream records [from, to) as NDJSON
         * @description One published record per line in leaf order; other organizations' records are redacted to {seq, leaf_hash, redacted}. Verify offline with `npx svc verify`.
         */
        get: operations["exportProvenance"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/provenance/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a provenance record */
        get: operations["getProvenance"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/provenance/{id}/proof": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Inclusion proof of a record against a checkpoint */
        get: operations["getProvenanceProof"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/compliance/deployment": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The deployment's compliance report, computed now and HMAC-signed */
        get: operations["getDeploymentCompliance"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/compliance/walled-garden": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Whether the ledger is verified beyond this service (witness cosignatures) */
        get: operations["getWalledGardenStatus"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the organization's agents
         * @description Newest first. The list keeps the spec's shape: `data.agents` and `data.next_cursor` (pass it back as `?cursor=`).
         */
        get: operations["listAgents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/deploy": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Deploy an agent (a new version when the name exists)
         * @description Checks the bundle's hash (`sha256:<hex>` of the decoded bundle; a mismatch is 400 on bundleHash) and size (SVC_MAX_BUNDLE_BYTES, default 512 KiB decoded), the manifest (strict: other keys are 400 UNKNOWN_FIELD; limits within SVC_AGENT_MAX_MEMORY_MB and SVC_AGENT_MAX_TIMEOUT_MS), and that you hold every capability it lists (else 403). Answers 202 while the bundle is loaded in the sandbox; the agent then becomes active, or inactive with the error in its status. With `wait: true` the bundle is loaded before the answer, 201 with the outcome. Redeploying an active agent keeps it active on its previous version until the new one is ready.
         */
        post: operations["deployAgent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{id}/status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * An agent's status, current version and runtime
         * @description `runtime` gives the current version's limits, bundle hash and deploy time, why the agent is inactive after a failed first deploy (`error`), and the latest deploys (`last_deploy`, `versions`).
         */
        get: operations["getAgentStatus"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{id}/activate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Activate an inactive agent
         * @description inactive → active; any other move is 409 naming both states. An agent none of whose deploys succeeded cannot be activated.
         */
        post: operations["activateAgent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{id}/deactivate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Deactivate an active agent
         * @description active → inactive; any other move is 409 naming both states. An inactive agent cannot be invoked; running executions go on.
         */
        post: operations["deactivateAgent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{id}/invoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run an agent: queue an execution
         * @description Answers 202 with the queued AsyncExecution. The run acts under a delegation derived from yours, narrowed to the manifest's capabilities you hold and bounded in time: revoking your delegation cancels it (error_json.code delegation_revoked). A failed attempt is retried with backoff while current_attempt < max_attempts. A callback_url is POSTed the execution when it ends, signed with the organization's callback secret (Standard Webhooks); loopback, private and metadata addresses are refused (400).
         */
        post: operations["invokeAgent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List executions
         * @description Newest first, filtered by status and agent_id.
         */
        get: operations["listExecutions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/callback-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The organization's callback signing secret
         * @description Verify callbacks with it (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature); created on first use.
         */
        get: operations["getCallbackSecret"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/callback-secret/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replace the callback signing secret
         * @description The new secret signs from now on; the previous one keeps signing beside it for 24 hours (`webhook-signature` then carries both).
         */
        post: operations["rotateCallbackSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get an execution */
        get: operations["getExecution"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel a queued or running execution
         * @description queued or processing → cancelled; a running sandbox stops within a second. An execution that has ended is 409 naming both states.
         */
        post: operations["cancelExecution"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{id}/callback-attempts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The callback's delivery attempts */
        get: operations["listCallbackAttempts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/executions/{id}/logs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The lines the run logged (ctx.log, console.*; at most 200) */
        get: operations["listExecutionLogs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List webhooks and agent triggers
         * @description Both kinds of subscription, newest first: webhooks with their health, agent triggers with target_url "" and the agent they start.
         */
        get: operations["listWebhooks"];
        put?: never;
        /**
         * Create a webhook
         * @description Events matching event_types are POSTed to target_url, signed with Standard Webhooks. The whsec_ secret is in this answer only. Needs svc_api:events:read too (a webhook delivers only what its creator may read), and for platform types the capability reading what they carry (svc_api:executions:read for execution.*, svc_api:agents:read for agent.*, …).
         */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a webhook and its health */
        get: operations["getWebhook"];
        put?: never;
        post?: never;
        /**
         * Delete a webhook
         * @description Queued deliveries are dropped; its delivery log goes with it.
         */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        /**
         * Change a webhook
         * @description Target, event types, description or status (active re-enables a disabled webhook).
         */
        patch: operations["updateWebhook"];
        trace?: never;
    };
    "/v1/webhooks/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A webhook's delivery attempts
         * @description Newest first: the event type, what was sent (headers with the signatures, never the secret; the body), the status, duration, the answer's headers and first 1 KB, and when the next attempt is due.
         */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/deliveries/{delivery_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * One delivery attempt
         * @description What was sent (event type, headers with the signatures but never the secret, body) and what came back (status, headers, the first 1 KB of the answer).
         */
        get: operations["getWebhookDelivery"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/deliveries/{delivery_id}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a delivery's event again
         * @description Queues one more attempt (same webhook-id, so receivers deduplicate). A disabled webhook is 409: re-enable it first.
         */
        post: operations["retryWebhookDelivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replace a webhook's signing secret
         * @description The new secret (shown once) signs from now on; the previous one keeps signing beside it for 24 hours (webhook-signature then carries both).
         */
        post: operations["rotateWebhookSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events/ingest": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Put an inbound event on the bus
         * @description An event from outside (a partner, a SaaS hook). It is matched against the organization's agent triggers and webhooks; each matched trigger queues an execution, each webhook a delivery, all in this call's transaction with its provenance record. A repeated `id` answers the first answer and dispatches nothing. Platform event types (agent.*, execution.*, webhook.disabled, … see the README's event catalogue) are refused: 400 with errors[].code RESERVED_EVENT_TYPE.
         */
        post: operations["ingestEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events/emit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Put an outbound event on the bus
         * @description An event from the organization's own systems; the same bus, matching and dispatch as ingest (agents emit through `ctx.events.emit`, recorded under this operation).
         */
        post: operations["emitEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List events with what they matched
         * @description Newest first; each with its matches (subscription, the execution or delivery it caused) and its provenance record and leaf index.
         */
        get: operations["listEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get an event */
        get: operations["getEvent"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /**
         * @example {
         *       "has_more": true,
         *       "next_cursor": "WyIyMDI2LTExLTIxVDA5OjMwOjAwLjAwMFoiLCJkbGdfMDFtODA2bXA2c3d4ejY3c2t2MTRkYTB5NDgiXQ.Qm9Kd3J2c2dWbGxQZ0pHWk1D"
         *     }
         */
        PaginationInfo: {
            has_more: boolean;
            /** @description Opaque; null when has_more is false. */
            next_cursor: string | null;
            total_count?: number;
        };
        /**
         * @example {
         *       "type": "invoice.paid",
         *       "payload": {
         *         "invoice_id": "inv_2041",
         *         "amount": 1250
         *       },
         *       "id": "evt-billing-88121",
         *       "source": "billing",
         *       "occurred_at": "2026-11-21T09:30:00.000Z"
         *     }
         */
        EventBody: {
            /** @description Dot notation, e.g. invoice.paid */
            type: string;
            /** @description The event's data (a JSON object); {} when absent */
            payload?: {
                [key: string]: unknown;
            };
            /** @description The sender's id for this event: a repeat with the same id answers the first answer and dispatches nothing */
            id?: string;
            /** @description Free-form origin, e.g. billing-service */
            source?: string;
            /**
             * Format: date-time
             * @description When it happened; defaults to now
             */
            occurred_at?: string;
        };
        /**
         * @example {
         *       "event_id": "evt_01m806mp6q2v9w3x5y7z8a0b1c",
         *       "matched_subscriptions": 2,
         *       "queued_executions": 1,
         *       "replayed": false
         *     }
         */
        EventAccepted: {
            event_id: string;
            /** @description How many active subscriptions (webhooks and agent triggers) matched */
            matched_subscriptions: number;
            /** @description How many agent executions it queued */
            queued_executions: number;
            /** @description true when the sender's `id` was seen before: this is the first answer again and nothing was dispatched (the answer also carries `Idempotent-Replayed: true`) */
            replayed: boolean;
        };
        /**
         * @example {
         *       "id": "evt_01m806mp6q2v9w3x5y7z8a0b1c",
         *       "type": "invoice.paid",
         *       "payload": {
         *         "invoice_id": "inv_2041",
         *         "amount": 1250
         *       },
         *       "sender_id": "evt-billing-88121",
         *       "source": "billing",
         *       "occurred_at": "2026-11-21T09:30:00.000Z",
         *       "via": "ingest",
         *       "actor": "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
         *       "delegation_id": "dlg_01m806mp6swxz67skv14da0y48",
         *       "provenance_record_id": "prv_01m806mp6sfvrcy2y16xnb5cjk",
         *       "leaf_index": 4211,
         *       "depth": 0,
         *       "created_at": "2026-11-21T09:30:00.012Z",
         *       "matches": [
         *         {
         *           "subscription_id": "sub_01m806mp6r3b4c5d6e7f8g9h0j",
         *           "kind": "agent_trigger",
         *           "agent_id": "agt_01m806mp6t3m7bq1xkz3k9r2hd",
         *           "execution_id": "exe_01m806mp6v2d8h5qz0w3c6p9ka",
         *           "delivery_id": null
         *         }
         *       ]
         *     }
         */
        Event: {
            id: string;
            type: string;
            payload: {
                [key: string]: unknown;
            };
            sender_id: string | null;
            source: string | null;
            /** @description ISO 8601 date-time */
            occurred_at: string;
            /** @enum {string} */
            via: "ingest" | "emit";
            /** @description The actor DID of the call that put it on the bus */
            actor: string;
            delegation_id: string | null;
            /** @description That call's provenance record */
            provenance_record_id: string | null;
            /** @description The record's leaf index in the ledger */
            leaf_index: number | null;
            /** @description 0 from outside; an event emitted by a run its trigger event's depth + 1 */
            depth: number;
            /** @description ISO 8601 date-time */
            created_at: string;
            matches: {
                subscription_id: string;
                /**
                 * @description null when the subscription has since been deleted
                 * @enum {string|null}
                 */
                kind: "webhook" | "agent_trigger" | null;
                agent_id: string | null;
                /** @description The execution a trigger queued */
                execution_id: string | null;
                /** @description The webhook delivery it scheduled */
                delivery_id: string | null;
            }[];
        };
        /**
         * @example {
         *       "data": [
         *         {
         *           "id": "evt_01m806mp6q2v9w3x5y7z8a0b1c",
         *           "type": "invoice.paid",
         *           "payload": {
         *             "invoice_id": "inv_2041",
         *             "amount": 1250
         *           },
         *           "sender_id": "evt-billing-88121",
         *           "source": "billing",
         *           "occurred_at": "2026-11-21T09:30:00.000Z",
         *           "via": "ingest",
         *           "actor": "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
         *           "delegation_id": "dlg_01m806mp6swxz67skv14da0y48",
         *           "provenance_record_id": "prv_01m806mp6sfvrcy2y16xnb5cjk",
         *           "leaf_index": 4211,
         *           "depth": 0,
         *           "created_at": "2026-11-21T09:30:00.012Z",
         *           "matches": [
         *             {
         *               "subscription_id": "sub_01m806mp6r3b4c5d6e7f8g9h0j",
         *               "kind": "agent_trigger",
         *               "agent_id": "agt_01m806mp6t3m7bq1xkz3k9r2hd",
         *               "execution_id": "exe_01m806mp6v2d8h5qz0w3c6p9ka",
         *               "delivery_id": null
         *             }
         *           ]
         *         }
         *       ],
         *       "pagination": {
         *         "has_more": false,
         *         "next_cursor": null
         *       }
         *     }
         */
        EventList: {
            data: components["schemas"]["Event"][];
            pagination: components["schemas"]["PaginationInfo"];
        };
        /**
         * @example {
         *       "did": "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
         *       "type": "agent",
         *       "name": "invoice-triage",
         *       "description": "Reads supplier invoices and routes them for approval",
         *       "org_did": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *       "verification_tier": 1,
         *       "identity_tier": 0,
         *       "public_key_jwk": {
         *         "kty": "OKP",
         *         "crv": "Ed25519",
         *         "x": "M6GgFRbFn_OaRMtg0wRJ3BuuhqDR3xQpqa0pu3XwB4o"
         *       },
         *       "created_at": "2026-11-21T09:30:00.000Z"
         *     }
         */
        Passport: {
            /** @description did:key of the passport's public key */
            did: string;
            /**
             * @description human passports come only from the console's WebAuthn registration
             * @enum {string}
             */
            type: "agent" | "organization" | "human";
            name: string;
            description: string | null;
            /** @description The organization the passport belongs to */
            org_did: string;
            /** @description 0 for a new passport; set by an organization administrator */
            verification_tier: number;
            /** @description 0 for a new passport; set by an organization administrator */
            identity_tier: number;
            public_key_jwk: {
                [key: string]: unknown;
            };
            /** @description ISO 8601 date-time */
            created_at: string;
        };
        /**
         * @example {
         *       "type": "agent",
         *       "name": "invoice-triage",
         *       "public_key": {
         *         "kty": "OKP",
         *         "crv": "Ed25519",
         *         "x": "M6GgFRbFn_OaRMtg0wRJ3BuuhqDR3xQpqa0pu3XwB4o"
         *       },
         *       "description": "Reads supplier invoices and routes them for approval"
         *     }
         */
        CreatePassportRequest: {
            /**
             * @description agent or organization; human passports are created by WebAuthn registration in the console
             * @enum {string}
             */
            type: "agent" | "organization";
            name: string;
            /** @description A public JWK, or a did:key / its multibase key string */
            public_key: ({
                kty: string;
                crv?: string;
                x?: string;
                y?: string;
                d?: string;
            } & {
                [key: string]: unknown;
            }) | string;
            description?: string | null;
        };
        /**
         * @example {
         *       "verification_tier": 1,
         *       "description": "Reads supplier invoices and routes them for approval"
         *     }
         */
        UpdatePassportRequest: {
            verification_tier?: number;
            identity_tier?: number;
            name?: string;
            description?: string | null;
        };
        /**
         * @example {
         *       "data": [
         *         {
         *           "did": "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
         *           "type": "agent",
         *           "name": "invoice-triage",
         *           "description": "Reads supplier invoices and routes them for approval",
         *           "org_did": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *           "verification_tier": 1,
         *           "identity_tier": 0,
         *           "public_key_jwk": {
         *             "kty": "OKP",
         *             "crv": "Ed25519",
         *             "x": "M6GgFRbFn_OaRMtg0wRJ3BuuhqDR3xQpqa0pu3XwB4o"
         *           },
         *           "created_at": "2026-11-21T09:30:00.000Z"
         *         }
         *       ],
         *       "pagination": {
         *         "has_more": true,
         *         "next_cursor": "WyIyMDI2LTExLTIxVDA5OjMwOjAwLjAwMFoiLCJkbGdfMDFtODA2bXA2c3d4ejY3c2t2MTRkYTB5NDgiXQ.Qm9Kd3J2c2dWbGxQZ0pHWk1D"
         *       }
         *     }
         */
        PassportList: {
            data: components["schemas"]["Passport"][];
            pagination: components["schemas"]["PaginationInfo"];
        };
        /**
         * @example {
         *       "capabilities": [
         *         "svc_api:passports:read",
         *         "svc_api:agents:invoke"
         *       ],
         *       "duration_seconds": 3600,
         *       "risk_level": "standard"
         *     }
         */
        SessionExchangeRequest: {
            /** @description Requested capabilities; when empty, svc_api:agents:read, svc_api:agents:invoke, and svc_api:reasoning:think once the service offers reasoning */
            capabilities?: string[];
            /** @description Alias of capabilities */
            scopes?: string[];
            /** @description Lifetime, 1 to 2592000 seconds; default 86400 (or what is left of the caller's delegation, if less) */
            duration_seconds?: number;
            environment?: string;
            /**
             * @description default standard
             * @enum {string}
             */
            risk_level?: "low" | "standard" | "high";
            required_verification_tier?: number;
            required_identity_tier?: number;
        };
        /**
         * @example {
         *       "delegation_id": "dlg_01m806mp6swxz67skv14da0y48",
         *       "token": "eyJhbGciOiJFZERTQSIsImtpZCI6IjJvWTVhIiwidHlwIjoiSldUIn0.eyJzdWIiOiJkaWQ6a2V5Ono2TWtodm9uREZKYngyaW9IeTRSamNUTk1rWlVpaTl0eUZUQUptZlE0NmE2ODlDZCIsImRsZyI6ImRsZ18wMW04MDZtcDZzd3h6Njdza3YxNGRhMHk0OCIsImV4cCI6MTc5NTM0MTQwMH0.3q2Jm2l0c2lnbmF0dXJlX29mX3RoZV9zZXJ2aWNlX2tleV9vdmVyX2hlYWRlcl9hbmRfcGF5bG9hZA",
         *       "passport_id": "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
         *       "did": "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
         *       "capabilities": [
         *         "svc_api:passports:read",
         *         "svc_api:agents:invoke"
         *       ],
         *       "created_at": "2026-11-21T09:30:00.000Z",
         *       "expires_at": "2026-11-22T09:30:00.000Z",
         *       "verification_tier": 1,
         *       "identity_tier": 0
         *     }
         */
        SessionExchangeResponse: {
            /** @description Unique grant id */
            delegation_id: string;
            /** @description Bearer token (JWT) */
            token: string;
            /** @description Passport DID that owns the delegation */
            passport_id: string;
            did: string;
            capabilities: string[];
            /** @description ISO 8601 date-time */
            created_at: string;
            /** @description ISO 8601 date-time */
            expires_at: string;
            verification_tier?: number;
            identity_tier?: number;
        };
        /**
         * @example {
         *       "delegate_did": "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
         *       "capabilities": [
         *         "svc_api:passports:read",
         *         "svc_api:agents:invoke"
         *       ],
         *       "duration_seconds": 86400,
         *       "environment": "production"
         *     }
         */
        DelegationTokenRequest: {
            /** @description The passport that receives the delegation (in the caller's organization) */
            delegate_did: string;
            capabilities: string[];
            duration_seconds: number;
            environment?: string;
        };
        /**
         * @example {
         *       "id": "dlg_01m806mp6swxz67skv14da0y48",
         *       "org_did": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *       "kind": "delegation_token",
         *       "name": null,
         *       "grantor_did": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *       "delegate_did": "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
         *       "parent_id": "dlg_01m806mp6shvwnpbge1af5jqa1",
         *       "capabilities": [
         *         "svc_api:passports:read",
         *         "svc_api:agents:invoke"
         *       ],
         *       "environment": "production",
         *       "risk_level": "standard",
         *       "status": "active",
         *       "created_at": "2026-11-21T09:30:00.000Z",
         *       "expires_at": "2026-11-22T09:30:00.000Z",
         *       "revoked_at": null
         *     }
         */
        Delegation: {
            id: string;
            org_did: string;
            /**
             * @description member: a console member's standing grant, from which their sessions and the API keys they create derive; execution: the delegation an agent run acts under, derived from its invoker's (revoked with reason run_ended when the run ends); trigger: the authority an agent's event triggers carry, derived from whoever deployed or activated it, narrowed to its manifest
             * @enum {string}
             */
            kind: "api_key" | "delegation_token" | "session" | "member" | "execution" | "trigger";
            name: string | null;
            /** @description Who allowed it */
            grantor_did: string;
            /** @description Who holds it */
            delegate_did: string;
            /** @description The delegation it was derived from */
            parent_id: string | null;
            capabilities: string[];
            environment: string | null;
            risk_level: string;
            /** @enum {string} */
            status: "active" | "expired" | "revoked";
            /** @description ISO 8601 date-time */
            created_at: string;
            /** @description ISO 8601 date-time */
            expires_at: string;
            /** @description ISO 8601 date-time */
            revoked_at: string | null;
        };
        /**
         * @example {
         *       "id": "dlg_01m806mp6swxz67skv14da0y48",
         *       "org_did": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *       "kind": "delegation_token",
         *       "name": null,
         *       "grantor_did": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *       "delegate_did": "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
         *       "parent_id": "dlg_01m806mp6shvwnpbge1af5jqa1",
         *       "capabilities": [
         *         "svc_api:passports:read",
         *         "svc_api:agents:invoke"
         *       ],
         *       "environment": "production",
         *       "risk_level": "standard",
         *       "status": "active",
         *       "created_at": "2026-11-21T09:30:00.000Z",
         *       "expires_at": "2026-11-22T09:30:00.000Z",
         *       "revoked_at": null,
         *       "ancestry": [
         *         "dlg_01m806mp6shvwnpbge1af5jqa1"
         *       ],
         *       "derived": []
         *     }
         */
        DelegationDetail: {
            id: string;
            org_did: string;
            /**
             * @description member: a console member's standing grant, from which their sessions and the API keys they create derive; execution: the delegation an agent run acts under, derived from its invoker's (revoked with reason run_ended when the run ends); trigger: the authority an agent's event triggers carry, derived from whoever deployed or activated it, narrowed to its manifest
             * @enum {string}
             */
            kind: "api_key" | "delegation_token" | "session" | "member" | "execution" | "trigger";
            name: string | null;
            /** @description Who allowed it */
            grantor_did: string;
            /** @description Who holds it */
            delegate_did: string;
            /** @description The delegation it was derived from */
            parent_id: string | null;
            capabilities: string[];
            environment: string | null;
            risk_level: string;
            /** @enum {string} */
            status: "active" | "expired" | "revoked";
            /** @description ISO 8601 date-time */
            created_at: string;
            /** @description ISO 8601 date-time */
            expires_at: string;
            /** @description ISO 8601 date-time */
            revoked_at: string | null;
            /** @description Ancestor delegation ids, root first */
            ancestry: string[];
            /** @description Delegations derived directly from this one (up to 100) */
            derived: components["schemas"]["Delegation"][];
        };
        /**
         * @example {
         *       "data": [
         *         {
         *           "id": "dlg_01m806mp6swxz67skv14da0y48",
         *           "org_did": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *           "kind": "delegation_token",
         *           "name": null,
         *           "grantor_did": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *           "delegate_did": "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
         *           "parent_id": "dlg_01m806mp6shvwnpbge1af5jqa1",
         *           "capabilities": [
         *             "svc_api:passports:read",
         *             "svc_api:agents:invoke"
         *           ],
         *           "environment": "production",
         *           "risk_level": "standard",
         *           "status": "active",
         *           "created_at": "2026-11-21T09:30:00.000Z",
         *           "expires_at": "2026-11-22T09:30:00.000Z",
         *           "revoked_at": null
         *         }
         *       ],
         *       "pagination": {
         *         "has_more": true,
         *         "next_cursor": "WyIyMDI2LTExLTIxVDA5OjMwOjAwLjAwMFoiLCJkbGdfMDFtODA2bXA2c3d4ejY3c2t2MTRkYTB5NDgiXQ.Qm9Kd3J2c2dWbGxQZ0pHWk1D"
         *       }
         *     }
         */
        DelegationList: {
            data: components["schemas"]["Delegation"][];
            pagination: components["schemas"]["PaginationInfo"];
        };
        /**
         * @example {
         *       "reason": "Agent decommissioned",
         *       "metadata": {
         *         "ticket": "OPS-1432"
         *       }
         *     }
         */
        RevokeRequest: {
            reason?: string;
            metadata?: {
                [key: string]: unknown;
            };
        };
        /**
         * @example {
         *       "id": "rev_01m806mp6sa84gxr0fgfghhr9y",
         *       "delegation_id": "dlg_01m806mp6swxz67skv14da0y48",
         *       "revoked_by": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *       "revoked_at": "2026-11-21T09:30:00.000Z",
         *       "reason": "Agent decommissioned",
         *       "metadata": {
         *         "ticket": "OPS-1432"
         *       }
         *     }
         */
        RevocationRecord: {
            id: string;
            delegation_id: string;
            /** @description DID of the actor who revoked it */
            revoked_by: string;
            /** @description ISO 8601 date-time */
            revoked_at: string;
            reason: string | null;
            metadata: {
                [key: string]: unknown;
            } | null;
        };
        /**
         * @example {
         *       "data": [
         *         {
         *           "id": "rev_01m806mp6sa84gxr0fgfghhr9y",
         *           "delegation_id": "dlg_01m806mp6swxz67skv14da0y48",
         *           "revoked_by": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *           "revoked_at": "2026-11-21T09:30:00.000Z",
         *           "reason": "Agent decommissioned",
         *           "metadata": {
         *             "ticket": "OPS-1432"
         *           }
         *         }
         *       ],
         *       "pagination": {
         *         "has_more": false,
         *         "next_cursor": null
         *       }
         *     }
         */
        RevocationList: {
            data: components["schemas"]["RevocationRecord"][];
            pagination: components["schemas"]["PaginationInfo"];
        };
        /**
         * @example {
         *       "requiredCapabilities": [
         *         "svc_api:passports:read",
         *         "svc_api:agents:invoke"
         *       ],
         *       "agent_ids": [
         *         "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd"
         *       ]
         *     }
         */
        CapabilityMatchRequest: {
            /** @description The capabilities to match (the spec's name). Exactly one of requiredCapabilities and required_capabilities is required. */
            requiredCapabilities?: string[];
            /** @description Alias of requiredCapabilities, spelled as in the response; send one or the other, not both. */
            required_capabilities?: string[];
            /** @description Only consider these passports / agents */
            agent_ids?: string[];
        };
        /**
         * @example {
         *       "data": {
         *         "required_capabilities": [
         *           "svc_api:passports:read",
         *           "svc_api:agents:invoke"
         *         ],
         *         "matches": [
         *           {
         *             "passport_id": "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
         *             "type": "agent",
         *             "name": "invoice-triage",
         *             "covered": true,
         *             "missing_capabilities": []
         *           }
         *         ],
         *         "partial": []
         *       }
         *     }
         */
        CapabilityMatchResponse: {
            data: {
                required_capabilities: string[];
                /** @description Passports covering every required capability */
                matches: {
                    passport_id: string;
                    /**
                     * @description human passports come only from the console's WebAuthn registration
                     * @enum {string}
                     */
                    type: "agent" | "organization" | "human";
                    name: string;
                    /** @description Whether the passport's active delegations cover every required capability */
                    covered: boolean;
                    missing_capabilities: string[];
                }[];
                /** @description Passports covering some but not all */
                partial: {
                    passport_id: string;
                    /**
                     * @description human passports come only from the console's WebAuthn registration
                     * @enum {string}
                     */
                    type: "agent" | "organization" | "human";
                    name: string;
                    /** @description Whether the passport's active delegations cover every required capability */
                    covered: boolean;
                    missing_capabilities: string[];
                }[];
            };
        };
        /**
         * @example {
         *       "name": "invoice-triage",
         *       "version": "1.2.0",
         *       "description": "Reads supplier invoices and routes them for approval",
         *       "capabilities": [
         *         {
         *           "id": "svc_api:agents:read",
         *           "evidence": [
         *             "Looks up the approver agent"
         *           ]
         *         }
         *       ],
         *       "on": [
         *         {
         *           "event": "invoice.received",
         *           "description": "A supplier invoice arrived"
         *         }
         *       ],
         *       "limits": {
         *         "memory_mb": 64,
         *         "timeout_ms": 30000
         *       }
         *     }
         */
        AgentManifest: {
            /** @description Unique in the organization; deploying the same name again adds a version */
            name: string;
            version: string;
            description?: string;
            capabilities: {
                /** @description A capability the agent's runs may use (the deployer must hold it), or a trigger declaration: event_trigger and event_trigger:<on entry's event> */
                id: string;
                /** @description Why the agent needs it (shown to reviewers) */
                evidence: string[];
            }[];
            on?: {
                event: string;
                description: string;
            }[];
            /** @description An agent passport of the organization the agent acts as */
            passport?: string;
            limits?: {
                /** @description Heap of one run in MiB; at most SVC_AGENT_MAX_MEMORY_MB (default 256); default 64 */
                memory_mb?: number;
                /** @description Wall-clock limit of one run; at most SVC_AGENT_MAX_TIMEOUT_MS (default 300000); default 30000 */
                timeout_ms?: number;
            };
            /** @description true: an execution's input is kept for its run (and retries) but never shown, in the API or the console (for inputs carrying personal data or secrets); default false */
            redact_input?: boolean;
        };
        /**
         * @example {
         *       "manifest": {
         *         "name": "invoice-triage",
         *         "version": "1.2.0",
         *         "description": "Reads supplier invoices and routes them for approval",
         *         "capabilities": [
         *           {
         *             "id": "svc_api:agents:read",
         *             "evidence": [
         *               "Looks up the approver agent"
         *             ]
         *           }
         *         ],
         *         "limits": {
         *           "memory_mb": 64,
         *           "timeout_ms": 30000
         *         }
         *       },
         *       "bundleBase64": "ZXhwb3J0IGRlZmF1bHQgYXN5bmMgKGlucHV0LCBjdHgpID0+IHsgY3R4LnByb2dyZXNzKDUwLCAiaGFsZiIpOyByZXR1cm4geyBvazogdHJ1ZSwgZWNobzogaW5wdXQgfTsgfQ==",
         *       "bundleHash": "sha256:210e2bf95841dcd9fd92852686ea5301a0a65ed782080135027ec98c623c6924",
         *       "wait": true
         *     }
         */
        AgentDeployRequest: {
            manifest: components["schemas"]["AgentManifest"];
            /** @description The bundle: one ES module, UTF-8, whose default export is async (input, ctx) => result; at most SVC_MAX_BUNDLE_BYTES (default 512 KiB) decoded */
            bundleBase64: string;
            /** @description sha256: + the lower-case hex SHA-256 of the decoded bundle */
            bundleHash: string;
            profile?: string;
            region?: string;
            /** @description Answer 201 once the bundle is checked (up to SVC_DEPLOY_WAIT_MS), instead of 202 at once */
            wait?: boolean;
        };
        /**
         * @example {
         *       "data": {
         *         "agentId": "agt_01m806mp6t3m7bq1xkz3k9r2hd",
         *         "status": "deploying",
         *         "trace_id": "req_01m806mp6s05dka2k9fejrktqr"
         *       }
         *     }
         */
        AgentDeployResponse: {
            data: {
                agentId: string;
                /** @description deploying (202), or the agent's status once checked (201) */
                status: string;
                trace_id?: string;
            };
        };
        /**
         * @example {
         *       "id": "agt_01m806mp6t3m7bq1xkz3k9r2hd",
         *       "name": "invoice-triage",
         *       "capabilities": [
         *         "svc_api:agents:read"
         *       ],
         *       "owner_org_passport_id": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *       "status": "active",
         *       "description": "Reads supplier invoices and routes them for approval",
         *       "passport_id": null,
         *       "version": "1.2.0",
         *       "updated_at": "2026-11-21T09:31:12.000Z"
         *     }
         */
        Agent: {
            id: string;
            name: string;
            capabilities: string[];
            owner_org_passport_id: string;
            /** @enum {string} */
            status: "active" | "inactive" | "deploying";
            description?: string | null;
            passport_id?: string | null;
            /** @description The current version's manifest version (null before a first deploy succeeds) */
            version?: string | null;
            /** @description When the agent last changed (deploy, activation, deactivation) */
            updated_at?: string;
        };
        /**
         * @example {
         *       "data": {
         *         "agents": [
         *           {
         *             "id": "agt_01m806mp6t3m7bq1xkz3k9r2hd",
         *             "name": "invoice-triage",
         *             "capabilities": [
         *               "svc_api:agents:read"
         *             ],
         *             "owner_org_passport_id": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *             "status": "active",
         *             "description": "Reads supplier invoices and routes them for approval",
         *             "passport_id": null,
         *             "version": "1.2.0",
         *             "updated_at": "2026-11-21T09:31:12.000Z"
         *           }
         *         ],
         *         "next_cursor": null
         *       }
         *     }
         */
        AgentListResponse: {
            data: {
                agents: components["schemas"]["Agent"][];
                next_cursor?: string | null;
            };
            meta?: {
                [key: string]: unknown;
            } | null;
        };
        /**
         * @example {
         *       "data": {
         *         "id": "agt_01m806mp6t3m7bq1xkz3k9r2hd",
         *         "name": "invoice-triage",
         *         "capabilities": [
         *           "svc_api:agents:read"
         *         ],
         *         "owner_org_passport_id": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *         "status": "active",
         *         "description": "Reads supplier invoices and routes them for approval",
         *         "passport_id": null,
         *         "version": "1.2.0",
         *         "updated_at": "2026-11-21T09:31:12.000Z",
         *         "runtime": {
         *           "engine": "quickjs-wasm",
         *           "limits": {
         *             "memory_mb": 64,
         *             "timeout_ms": 30000
         *           },
         *           "bundle_hash": "sha256:210e2bf95841dcd9fd92852686ea5301a0a65ed782080135027ec98c623c6924",
         *           "deployed_at": "2026-11-21T09:31:12.000Z",
         *           "error": null,
         *           "last_deploy": {
         *             "seq": 2,
         *             "version": "1.2.0",
         *             "status": "ready",
         *             "bundle_hash": "sha256:210e2bf95841dcd9fd92852686ea5301a0a65ed782080135027ec98c623c6924",
         *             "limits": {
         *               "memory_mb": 64,
         *               "timeout_ms": 30000
         *             },
         *             "error": null,
         *             "deployed_at": "2026-11-21T09:31:12.000Z",
         *             "created_at": "2026-11-21T09:30:00.000Z"
         *           },
         *           "versions": [
         *             {
         *               "seq": 2,
         *               "version": "1.2.0",
         *               "status": "ready",
         *               "bundle_hash": "sha256:210e2bf95841dcd9fd92852686ea5301a0a65ed782080135027ec98c623c6924",
         *               "limits": {
         *                 "memory_mb": 64,
         *                 "timeout_ms": 30000
         *               },
         *               "error": null,
         *               "deployed_at": "2026-11-21T09:31:12.000Z",
         *               "created_at": "2026-11-21T09:30:00.000Z"
         *             }
         *           ]
         *         }
         *       }
         *     }
         */
        AgentStatusResponse: {
            data: {
                id: string;
                name: string;
                /** @enum {string} */
                status: "active" | "inactive" | "deploying";
                owner_org_passport_id: string;
                description: string | null;
                version: string | null;
                /** @description The current version's runtime, and the deploys */
                runtime: {
                    /** @enum {string} */
                    engine: "quickjs-wasm";
                    limits: {
                        memory_mb: number;
                        timeout_ms: number;
                    } | null;
                    bundle_hash: string | null;
                    /** @description When the current version became ready */
                    deployed_at: string | null;
                    /** @description Why the agent is inactive after a failed first deploy */
                    error: ({
                        code: string;
                        message: string;
                    } & {
                        [key: string]: unknown;
                    }) | null;
                    /** @description The latest deploy, which may still be checking or may have been rejected */
                    last_deploy: {
                        seq: number;
                        version: string;
                        /** @enum {string} */
                        status: "deploying" | "ready" | "rejected";
                        bundle_hash: string;
                        limits: {
                            memory_mb: number;
                            timeout_ms: number;
                        };
                        error: ({
                            code: string;
                            message: string;
                        } & {
                            [key: string]: unknown;
                        }) | null;
                        /** @description ISO 8601 date-time */
                        deployed_at: string | null;
                        /** @description ISO 8601 date-time */
                        created_at: string;
                    } | null;
                    /** @description Newest first, at most 20 */
                    versions: {
                        seq: number;
                        version: string;
                        /** @enum {string} */
                        status: "deploying" | "ready" | "rejected";
                        bundle_hash: string;
                        limits: {
                            memory_mb: number;
                            timeout_ms: number;
                        };
                        error: ({
                            code: string;
                            message: string;
                        } & {
                            [key: string]: unknown;
                        }) | null;
                        /** @description ISO 8601 date-time */
                        deployed_at: string | null;
                        /** @description ISO 8601 date-time */
                        created_at: string;
                    }[];
                } | null;
                passport_id: string | null;
                capabilities: string[];
                /** @description ISO 8601 date-time */
                updated_at: string;
            };
        };
        /**
         * @example {
         *       "input": {
         *         "invoice_id": "inv_2041",
         *         "amount": 1250
         *       },
         *       "callback_url": "https://hooks.example.com/svc/executions",
         *       "max_attempts": 3
         *     }
         */
        InvokeRequest: {
            /** @description JSON given to the handler as its first argument */
            input?: unknown;
            /** @description POSTed the execution, signed with the organization's callback secret (Standard Webhooks), when it ends */
            callback_url?: string;
            /**
             * @description Runs allowed before the execution fails, 1 to 10
             * @default 3
             */
            max_attempts?: number;
        };
        ExecutionAttempt: {
            /** @description 1 on the first run */
            attempt: number;
            /**
             * @description lost: its worker stopped (crashed or frozen past its lease) before it ended; error says why
             * @enum {string}
             */
            status: "running" | "completed" | "failed" | "cancelled" | "lost";
            /** @description The worker that ran it */
            worker_id: string | null;
            /** @description ISO 8601 date-time */
            started_at: string;
            /** @description ISO 8601 date-time */
            ended_at: string | null;
            /** @description {code, message, …} when it did not complete: a handler's error (with name and stack), or worker_lost / timeout with the cause of a lost attempt */
            error: {
                [key: string]: unknown;
            } | null;
        };
        /**
         * @example {
         *       "id": "exe_01m806mp6v2d8h5qz0w3c6p9ka",
         *       "status": "completed",
         *       "queued_at": "2026-11-21T09:32:00.000Z",
         *       "task_id": "job_01m806mp6v7k1s0d9x4e2f8b3m",
         *       "agent_id": "agt_01m806mp6t3m7bq1xkz3k9r2hd",
         *       "requester_passport_id": "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
         *       "result_json": {
         *         "routed_to": "finance-approvers",
         *         "amount": 1250
         *       },
         *       "error_json": null,
         *       "progress_percent": 100,
         *       "progress_message": "routed",
         *       "callback_url": "https://hooks.example.com/svc/executions",
         *       "callback_success": true,
         *       "callback_attempts": 1,
         *       "max_attempts": 3,
         *       "current_attempt": 1,
         *       "started_at": "2026-11-21T09:32:00.041Z",
         *       "completed_at": "2026-11-21T09:32:00.219Z",
         *       "provenance_id": "prv_01m806mp6sfvrcy2y16xnb5cjk"
         *     }
         */
        AsyncExecution: {
            id: string;
            /** @enum {string} */
            status: "queued" | "processing" | "completed" | "failed" | "cancelled";
            /** @description ISO 8601 date-time */
            queued_at: string;
            /** @description The job that runs the execution */
            task_id?: string;
            agent_id?: string;
            /** @description Who invoked it: the invoker's passport (or organization) DID */
            requester_passport_id?: string;
            /** @description The handler's result; a result that is not a JSON object is given as {value} */
            result_json?: {
                [key: string]: unknown;
            } | null;
            /** @description {code, message, …}: code is timeout, cancelled, delegation_revoked, memory_limit, stack_overflow, no_handler, syntax_error, handler_error, worker_lost or internal */
            error_json?: {
                [key: string]: unknown;
            } | null;
            progress_percent?: number;
            progress_message?: string | null;
            callback_url?: string | null;
            /** @description null while no callback was attempted or it is still being retried */
            callback_success?: boolean | null;
            callback_attempts?: number;
            max_attempts?: number;
            current_attempt?: number;
            /** @description ISO 8601 date-time */
            started_at?: string | null;
            /** @description ISO 8601 date-time */
            completed_at?: string | null;
            /** @description The provenance record of the run (written when it ends) */
            provenance_id?: string | null;
            /** @description Only in GET /v1/executions/{id}: the input the handler was given (null when none, or when the agent's manifest sets redact_input) */
            input?: unknown;
            /** @description Only in GET /v1/executions/{id}: true when the agent's manifest sets redact_input, so the input is kept for the run but never shown */
            input_redacted?: boolean;
            /** @description Only in GET /v1/executions/{id}: every attempt, oldest first */
            attempts?: components["schemas"]["ExecutionAttempt"][];
        };
        /**
         * @example {
         *       "data": [
         *         {
         *           "id": "exe_01m806mp6v2d8h5qz0w3c6p9ka",
         *           "status": "completed",
         *           "queued_at": "2026-11-21T09:32:00.000Z",
         *           "task_id": "job_01m806mp6v7k1s0d9x4e2f8b3m",
         *           "agent_id": "agt_01m806mp6t3m7bq1xkz3k9r2hd",
         *           "requester_passport_id": "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
         *           "result_json": {
         *             "routed_to": "finance-approvers",
         *             "amount": 1250
         *           },
         *           "error_json": null,
         *           "progress_percent": 100,
         *           "progress_message": "routed",
         *           "callback_url": "https://hooks.example.com/svc/executions",
         *           "callback_success": true,
         *           "callback_attempts": 1,
         *           "max_attempts": 3,
         *           "current_attempt": 1,
         *           "started_at": "2026-11-21T09:32:00.041Z",
         *           "completed_at": "2026-11-21T09:32:00.219Z",
         *           "provenance_id": "prv_01m806mp6sfvrcy2y16xnb5cjk"
         *         }
         *       ],
         *       "pagination": {
         *         "has_more": false,
         *         "next_cursor": null
         *       }
         *     }
         */
        ExecutionList: {
            data: components["schemas"]["AsyncExecution"][];
            pagination: components["schemas"]["PaginationInfo"];
        };
        /**
         * @example {
         *       "data": [
         *         {
         *           "id": "cba_01m806mp6w1x4c7v0b3n6m9q2s",
         *           "attempt": 1,
         *           "status_code": 500,
         *           "success": false,
         *           "duration_ms": 42,
         *           "error": null,
         *           "next_attempt_at": "2026-11-21T09:32:05.219Z",
         *           "created_at": "2026-11-21T09:32:00.230Z"
         *         },
         *         {
         *           "id": "cba_01m806mp6x5d8f1g4h7j0k3l6z",
         *           "attempt": 2,
         *           "status_code": 200,
         *           "success": true,
         *           "duration_ms": 38,
         *           "error": null,
         *           "next_attempt_at": null,
         *           "created_at": "2026-11-21T09:32:05.260Z"
         *         }
         *       ]
         *     }
         */
        CallbackAttemptList: {
            data: {
                id: string;
                attempt: number;
                status_code: number | null;
                success: boolean;
                duration_ms: number;
                error: string | null;
                /** @description ISO 8601 date-time */
                next_attempt_at: string | null;
                /** @description ISO 8601 date-time */
                created_at: string;
            }[];
        };
        /**
         * @example {
         *       "data": [
         *         {
         *           "seq": 1,
         *           "level": "info",
         *           "line": "routing invoice inv_2041",
         *           "created_at": "2026-11-21T09:32:00.100Z"
         *         }
         *       ]
         *     }
         */
        ExecutionLogList: {
            data: {
                seq: number;
                /** @enum {string} */
                level: "debug" | "info" | "warn" | "error";
                line: string;
                /** @description ISO 8601 date-time */
                created_at: string;
                /** @description The attempt that logged it (1 on the first run) */
                attempt?: number;
            }[];
        };
        /**
         * @example {
         *       "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
         *     }
         */
        CallbackSecret: {
            /** @description whsec_…: verify callbacks with it (Standard Webhooks) */
            secret: string;
        };
        /**
         * @example {
         *       "secret": "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
         *       "previous_expires_at": "2026-11-22T09:30:00.000Z"
         *     }
         */
        RotatedCallbackSecret: {
            /** @description The new secret; callbacks are signed with it from now on */
            secret: string;
            /** @description Until then callbacks also carry a signature with the previous secret */
            previous_expires_at: string | null;
        };
        /**
         * @example {
         *       "deployment_id": "01m806mp6se5epkgsjernk0mc6",
         *       "protocol_version": "svc-compliance/1",
         *       "compliance": {
         *         "human_passport_minting": "device_only",
         *         "attestation_formats_accepted": [
         *           "packed",
         *           "tpm",
         *           "android-key",
         *           "apple",
         *           "fido-u2f",
         *           "none"
         *         ],
         *         "ledger_sync_status": "in_sync",
         *         "passport_count": 12,
         *         "verification_count": 4,
         *         "last_compliance_check": "2026-11-21T09:30:00.000Z",
         *         "ledger": {
         *           "record_count": 1042,
         *           "checkpoint_tree_size": 1042,
         *           "records_behind": 0,
         *           "checkpoint_age_seconds": 0.4
         *         }
         *       },
         *       "invariants": {
         *         "server_side_key_generation": false,
         *         "private_key_access": false,
         *         "biometric_binding_hash_used": false,
         *         "webauthn_required_for_humans": true
         *       },
         *       "signature": "5b1f0c3e9a7d2468ace013579bdf2468ace013579bdf2468ace013579bdf2468"
         *     }
         */
        DeploymentComplianceResponse: {
            deployment_id: string;
            protocol_version: string;
            compliance: {
                /** @enum {string} */
                human_passport_minting: "device_only";
                /** @description WebAuthn attestation formats the console's registration accepts */
                attestation_formats_accepted: string[];
                /** @description in_sync when the newest checkpoint covers every record; behind otherwise */
                ledger_sync_status: string;
                passport_count: number;
                /** @description Passports with a verification tier of at least 1 */
                verification_count: number;
                last_compliance_check: string;
                /** @description The figures behind ledger_sync_status */
                ledger: {
                    record_count: number;
                    checkpoint_tree_size: number;
                    records_behind: number;
                    checkpoint_age_seconds: number | null;
                };
            };
            invariants: {
                server_side_key_generation: boolean;
                private_key_access: boolean;
                biometric_binding_hash_used: boolean;
                webauthn_required_for_humans: boolean;
            };
            /** @description HMAC-SHA256 (hex) of the RFC 8785 canonical JSON of this object less `signature`; see README, Compliance */
            signature: string;
        };
        /**
         * @example {
         *       "network_verification": "local_only",
         *       "explanation": "No witness is configured (SVC_WITNESSES), so the ledger's 1042 checkpointed records are vouched for only by this service's own signature. An auditor can check that records match the signed checkpoints, but not that the operator shows everyone the same checkpoints.",
         *       "mitigations": [
         *         "Every checkpoint is signed with the service's Ed25519 key; `npx svc verify` checks exports, checkpoints and proofs offline with only the public verifier key."
         *       ],
         *       "risks": {
         *         "walled_garden_possible": true,
         *         "blast_radius": "The whole ledger (1042 checkpointed records): an operator with database and key access could present a rewritten history to an auditor who holds no earlier checkpoint.",
         *         "risk_acceptance": "Accepted only while auditors keep their own copies of checkpoints; configure witnesses to remove it."
         *       },
         *       "recommendations": [
         *         "Configure at least one independent witness in SVC_WITNESSES (<witness verifier key>@<url>) so that checkpoints are cosigned outside this deployment."
         *       ],
         *       "witnesses": []
         *     }
         */
        WalledGardenStatus: {
            /** @enum {string} */
            network_verification: "local_only" | "network_verified";
            explanation: string;
            mitigations: string[];
            risks: {
                walled_garden_possible: boolean;
                blast_radius: string;
                risk_acceptance: string;
            };
            recommendations: string[];
            /** @description Configured witnesses and their latest cosignature */
            witnesses: {
                name: string;
                url: string;
                last_cosignature: {
                    witness: string;
                    tree_size: number;
                    signed_at: string;
                    /** @description The cosignature line exactly as the witness returned it */
                    line: string;
                } | null;
            }[];
        };
        /**
         * @example {
         *       "org_did": "did:key:z6MkqMtj2BAwHhzFtD6J1hkpo4Bsrmi4fgBvfUESLu2XBi88",
         *       "name": "Acme Logistics",
         *       "slug": "acme-logistics",
         *       "deployment_mode": "cloud",
         *       "autonomy_profile": "balanced",
         *       "data_residency_tier": "regional",
         *       "parent_org_did": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *       "created_at": "2026-11-21T09:30:00.000Z",
         *       "updated_at": "2026-11-21T09:30:00.000Z"
         *     }
         */
        CpOrg: {
            /** @description Organization passport DID */
            org_did: string;
            name: string;
            slug: string;
            /** @enum {string} */
            deployment_mode: "cloud" | "self_hosted" | "hybrid";
            /** @enum {string|null} */
            autonomy_profile?: "paranoid" | "balanced" | "aggressive" | null;
            /** @enum {string|null} */
            data_residency_tier?: "local_only" | "regional" | "global" | null;
            /** @description The organization that created it; null for the root organization */
            parent_org_did: string | null;
            created_at: string;
            updated_at: string;
        };
        /**
         * @example {
         *       "org_did": "did:key:z6MkqMtj2BAwHhzFtD6J1hkpo4Bsrmi4fgBvfUESLu2XBi88",
         *       "name": "Acme Logistics",
         *       "deployment_mode": "cloud",
         *       "data_residency_tier": "regional"
         *     }
         */
        CreateCpOrgRequest: {
            /** @description DID of an organization passport registered in the caller's organization */
            org_did: string;
            name: string;
            slug?: string;
            /**
             * @default cloud
             * @enum {string}
             */
            deployment_mode?: "cloud" | "self_hosted" | "hybrid";
            /** @enum {string} */
            autonomy_profile?: "paranoid" | "balanced" | "aggressive";
            /** @enum {string} */
            data_residency_tier?: "local_only" | "regional" | "global";
        };
        /**
         * @example {
         *       "autonomy_profile": "paranoid"
         *     }
         */
        UpdateCpOrgRequest: {
            name?: string;
            /** @enum {string} */
            deployment_mode?: "cloud" | "self_hosted" | "hybrid";
            /** @enum {string|null} */
            autonomy_profile?: "paranoid" | "balanced" | "aggressive" | null;
            /** @enum {string|null} */
            data_residency_tier?: "local_only" | "regional" | "global" | null;
        };
        /**
         * @example {
         *       "data": [
         *         {
         *           "org_did": "did:key:z6MkqMtj2BAwHhzFtD6J1hkpo4Bsrmi4fgBvfUESLu2XBi88",
         *           "name": "Acme Logistics",
         *           "slug": "acme-logistics",
         *           "deployment_mode": "cloud",
         *           "autonomy_profile": "balanced",
         *           "data_residency_tier": "regional",
         *           "parent_org_did": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *           "created_at": "2026-11-21T09:30:00.000Z",
         *           "updated_at": "2026-11-21T09:30:00.000Z"
         *         }
         *       ],
         *       "pagination": {
         *         "has_more": false,
         *         "next_cursor": null
         *       }
         *     }
         */
        CpOrgList: {
            data: components["schemas"]["CpOrg"][];
            pagination: components["schemas"]["PaginationInfo"];
        };
        /**
         * @example {
         *       "id": "prv_01m806mp6sfvrcy2y16xnb5cjk",
         *       "seq": 1041,
         *       "timestamp": "2026-11-21T09:30:00.000Z",
         *       "org_did": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *       "actor_did": "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
         *       "delegation_id": "dlg_01m806mp6swxz67skv14da0y48",
         *       "grantor_did": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *       "capability": "svc_api:passports:read",
         *       "operation": "GET /v1/passports/{did}",
         *       "resource_type": "passport",
         *       "resource_id": "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
         *       "decision": "allowed",
         *       "status": 200,
         *       "request_hash": "594e519ae499312b29433b7dd8a97ff068defcba9755b6d5d00e84c524d67b06",
         *       "request_id": "req_01m806mp6s05dka2k9fejrktqr",
         *       "leaf_hash": "ofzkNjhU/4iM/0uOeHXWAMJoI5BBKoz3mzfQsRFIsPo="
         *     }
         */
        ProvenanceRecord: {
            id: string;
            /** @description Leaf index in the ledger's Merkle tree */
            seq: number;
            /** @description ISO 8601 date-time */
            timestamp: string;
            org_did: string;
            /** @description Who acted */
            actor_did: string | null;
            delegation_id: string | null;
            /** @description Who allowed it */
            grantor_did: string | null;
            /** @description The capability checked */
            capability: string | null;
            /** @description Method and route template, e.g. GET /v1/passports/{did} */
            operation: string;
            resource_type: string | null;
            resource_id: string | null;
            /** @enum {string} */
            decision: "allowed" | "denied";
            /** @description HTTP status of the answer */
            status: number;
            /** @description SHA-256 (hex) of the canonical request body */
            request_hash: string;
            request_id: string;
            /** @description base64 SHA-256(0x00 ‖ RFC 8785 canonical JSON of this record less leaf_hash) */
            leaf_hash: string;
        };
        /**
         * @example {
         *       "data": [
         *         {
         *           "id": "prv_01m806mp6sfvrcy2y16xnb5cjk",
         *           "seq": 1041,
         *           "timestamp": "2026-11-21T09:30:00.000Z",
         *           "org_did": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *           "actor_did": "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
         *           "delegation_id": "dlg_01m806mp6swxz67skv14da0y48",
         *           "grantor_did": "did:svc:01m806mp6se5epkgsjernk0mc6",
         *           "capability": "svc_api:passports:read",
         *           "operation": "GET /v1/passports/{did}",
         *           "resource_type": "passport",
         *           "resource_id": "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
         *           "decision": "allowed",
         *           "status": 200,
         *           "request_hash": "594e519ae499312b29433b7dd8a97ff068defcba9755b6d5d00e84c524d67b06",
         *           "request_id": "req_01m806mp6s05dka2k9fejrktqr",
         *           "leaf_hash": "ofzkNjhU/4iM/0uOeHXWAMJoI5BBKoz3mzfQsRFIsPo="
         *         }
         *       ],
         *       "pagination": {
         *         "has_more": true,
         *         "next_cursor": "WyIyMDI2LTExLTIxVDA5OjMwOjAwLjAwMFoiLCJkbGdfMDFtODA2bXA2c3d4ejY3c2t2MTRkYTB5NDgiXQ.Qm9Kd3J2c2dWbGxQZ0pHWk1D"
         *       }
         *     }
         */
        ProvenanceList: {
            data: components["schemas"]["ProvenanceRecord"][];
            pagination: components["schemas"]["PaginationInfo"];
        };
        /**
         * @example {
         *       "record_id": "prv_01m806mp6sfvrcy2y16xnb5cjk",
         *       "leaf_index": 1041,
         *       "tree_size": 1042,
         *       "leaf_hash": "ofzkNjhU/4iM/0uOeHXWAMJoI5BBKoz3mzfQsRFIsPo=",
         *       "inclusion_path": [
         *         "gg1di692LsZtzVb+0Vx4vyeY1Pm9SS9FU+mbRoSGVJg=",
         *         "Z2uLuEznJn3VIN7KSBHI8QpT5jY1LwaYf0L+QlrO3YA=",
         *         "BICpPS6bCUuJ4I4Bl2CJrBgZOvgCxmtjHMjS3BuujIg="
         *       ],
         *       "checkpoint": "svc.example.com/ledger\n1042\nLXEWQrcmsEQBYnyp+6wy9chTD7GQPMTbAiWHF5IaSIE=\n\n— svc.example.com/ledger b5C0i9wDsj/MPThIiVEGEZnw+SUoPKY8CjCLOFC8cpEJqX2YkPtP66c6B19wZMUTsqOAQ/btdLeYLLaKTLoMugMnSg8=\n"
         *     }
         */
        InclusionProof: {
            record_id: string;
            leaf_index: number;
            tree_size: number;
            leaf_hash: string;
            /** @description base64 node hashes, RFC 9162 §2.1.3 */
            inclusion_path: string[];
            /** @description The signed note of the checkpoint of tree_size */
            checkpoint: string;
        };
        /**
         * @example {
         *       "from_size": 1000,
         *       "to_size": 1042,
         *       "consistency_path": [
         *         "gg1di692LsZtzVb+0Vx4vyeY1Pm9SS9FU+mbRoSGVJg=",
         *         "Z2uLuEznJn3VIN7KSBHI8QpT5jY1LwaYf0L+QlrO3YA=",
         *         "BICpPS6bCUuJ4I4Bl2CJrBgZOvgCxmtjHMjS3BuujIg="
         *       ]
         *     }
         */
        ConsistencyProof: {
            from_size: number;
            to_size: number;
            /** @description base64 node hashes, RFC 9162 §2.1.4 */
            consistency_path: string[];
        };
        /**
         * @example {
         *       "target_url": "https://hooks.example.com/svc",
         *       "event_types": [
         *         "invoice.*",
         *         "execution.failed"
         *       ],
         *       "description": "Billing system"
         *     }
         */
        WebhookCreateRequest: {
            /** @description Where deliveries are POSTed: https (plain http only for hosts in SVC_OUTBOUND_ALLOW); never a private or metadata address */
            target_url: string;
            /** @description The event types (or `.*` prefixes) delivered to it */
            event_types: string[];
            /** @description A note for people */
            description?: string;
        };
        /**
         * @example {
         *       "status": "active"
         *     }
         */
        WebhookUpdateRequest: {
            /** @description A new target (checked like at creation) */
            target_url?: string;
            event_types?: string[];
            description?: string | null;
            /**
             * @description `active` re-enables a disabled webhook (its failure period starts over); `disabled` pauses it
             * @enum {string}
             */
            status?: "active" | "disabled";
        };
        /**
         * @example {
         *       "last_success_at": "2026-11-21T09:31:00.000Z",
         *       "last_failure_at": null,
         *       "consecutive_failures": 0,
         *       "failing_since": null,
         *       "disabled_reason": null
         *     }
         */
        WebhookHealth: {
            /** @description ISO 8601 date-time */
            last_success_at: string | null;
            /** @description ISO 8601 date-time */
            last_failure_at: string | null;
            /** @description Failed attempts since the last success */
            consecutive_failures: number;
            /** @description The first failure since the last success; once it is older than SVC_WEBHOOK_DISABLE_AFTER_SECONDS the webhook is disabled */
            failing_since: string | null;
            /** @description gone (the receiver answered 410), failing, delegation_revoked, or manual */
            disabled_reason: string | null;
        };
        /**
         * @example {
         *       "id": "sub_01m806mp6t2k9d8c7b6a5z4y3x",
         *       "target_url": "https://hooks.example.com/svc",
         *       "event_types": [
         *         "invoice.*",
         *         "execution.failed"
         *       ],
         *       "description": "Billing system",
         *       "delegation_id": "dlg_01m806mp6swxz67skv14da0y48",
         *       "rebound_from_delegation_id": null,
         *       "created_at": "2026-11-21T09:30:00.000Z",
         *       "kind": "webhook",
         *       "status": "active"
         *     }
         */
        Webhook: {
            id: string;
            /** @enum {string} */
            kind: "webhook";
            target_url: string;
            event_types: string[];
            description: string | null;
            /** @enum {string} */
            status: "active" | "disabled";
            health?: components["schemas"]["WebhookHealth"];
            /** @description The delegation deliveries act under (their provenance records name it): its creator's, or whoever re-enabled it after that one was revoked */
            delegation_id: string | null;
            /** @description Set when a webhook disabled by its delegation's revocation was re-enabled: the revoked delegation it was moved from */
            rebound_from_delegation_id: string | null;
            /** @description ISO 8601 date-time */
            created_at: string;
        };
        /**
         * @example {
         *       "id": "sub_01m806mp6t2k9d8c7b6a5z4y3x",
         *       "target_url": "https://hooks.example.com/svc",
         *       "event_types": [
         *         "invoice.*",
         *         "execution.failed"
         *       ],
         *       "description": "Billing system",
         *       "delegation_id": "dlg_01m806mp6swxz67skv14da0y48",
         *       "rebound_from_delegation_id": null,
         *       "created_at": "2026-11-21T09:30:00.000Z",
         *       "kind": "webhook",
         *       "status": "active",
         *       "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwJ8cH3Jq4Vh0="
         *     }
         */
        WebhookWithSecret: {
            id: string;
            /** @enum {string} */
            kind: "webhook";
            target_url: string;
            event_types: string[];
            description: string | null;
            /** @enum {string} */
            status: "active" | "disabled";
            /** @description whsec_…: verify deliveries with it (Standard Webhooks). Shown only here and by rotate-secret */
            secret: string;
            /** @description The delegation deliveries act under (their provenance records name it): its creator's, or whoever re-enabled it after that one was revoked */
            delegation_id: string | null;
            /** @description Set when a webhook disabled by its delegation's revocation was re-enabled: the revoked delegation it was moved from */
            rebound_from_delegation_id: string | null;
            /** @description ISO 8601 date-time */
            created_at: string;
        };
        /**
         * @example {
         *       "id": "sub_01m806mp6t2k9d8c7b6a5z4y3x",
         *       "target_url": "https://hooks.example.com/svc",
         *       "event_types": [
         *         "invoice.*",
         *         "execution.failed"
         *       ],
         *       "description": "Billing system",
         *       "delegation_id": "dlg_01m806mp6swxz67skv14da0y48",
         *       "rebound_from_delegation_id": null,
         *       "created_at": "2026-11-21T09:30:00.000Z",
         *       "kind": "webhook",
         *       "agent_id": null,
         *       "status": "active",
         *       "health": {
         *         "last_success_at": "2026-11-21T09:31:00.000Z",
         *         "last_failure_at": null,
         *         "consecutive_failures": 0,
         *         "failing_since": null,
         *         "disabled_reason": null
         *       }
         *     }
         */
        Subscription: {
            id: string;
            /** @enum {string} */
            kind: "webhook" | "agent_trigger";
            /** @description "" for agent triggers */
            target_url: string;
            event_types: string[];
            /** @description The agent a trigger starts (null for webhooks) */
            agent_id: string | null;
            description: string | null;
            /** @description active or disabled */
            status: string;
            /** @description Webhooks only */
            health?: components["schemas"]["WebhookHealth"];
            /** @description ISO 8601 date-time */
            created_at: string;
        };
        /**
         * @example {
         *       "data": [
         *         {
         *           "id": "sub_01m806mp6t2k9d8c7b6a5z4y3x",
         *           "target_url": "https://hooks.example.com/svc",
         *           "event_types": [
         *             "invoice.*",
         *             "execution.failed"
         *           ],
         *           "description": "Billing system",
         *           "delegation_id": "dlg_01m806mp6swxz67skv14da0y48",
         *           "rebound_from_delegation_id": null,
         *           "created_at": "2026-11-21T09:30:00.000Z",
         *           "kind": "webhook",
         *           "agent_id": null,
         *           "status": "active",
         *           "health": {
         *             "last_success_at": "2026-11-21T09:31:00.000Z",
         *             "last_failure_at": null,
         *             "consecutive_failures": 0,
         *             "failing_since": null,
         *             "disabled_reason": null
         *           }
         *         },
         *         {
         *           "id": "sub_01m806mp6t7h6g5f4e3d2c1b0a",
         *           "kind": "agent_trigger",
         *           "target_url": "",
         *           "event_types": [
         *             "invoice.paid"
         *           ],
         *           "agent_id": "agt_01m806mp6t9z8y7x6w5v4u3t2s",
         *           "description": "Route paid invoices",
         *           "status": "active",
         *           "created_at": "2026-11-21T09:30:00.000Z"
         *         }
         *       ],
         *       "pagination": {
         *         "has_more": false,
         *         "next_cursor": null
         *       }
         *     }
         */
        SubscriptionList: {
            data: components["schemas"]["Subscription"][];
            pagination: components["schemas"]["PaginationInfo"];
        };
        /**
         * @example {
         *       "id": "whd_01m806mp6w1x4c7v0b3n6m9q2s",
         *       "event_id": "evt_01m806mp6v3c2b1a0z9y8x7w6v",
         *       "attempt": 1,
         *       "status_code": 500,
         *       "success": false,
         *       "duration_ms": 42,
         *       "response_excerpt": "upstream unavailable",
         *       "error": null,
         *       "created_at": "2026-11-21T09:32:00.230Z",
         *       "next_attempt_at": "2026-11-21T09:32:05.230Z",
         *       "event_type": "invoice.paid",
         *       "request": {
         *         "headers": {
         *           "content-type": "application/json",
         *           "user-agent": "svc-webhooks",
         *           "webhook-id": "msg_evt_01m806mp6v3c2b1a0z9y8x7w6v_sub_01m806mp6t2k9d8c7b6a5z4y3x",
         *           "webhook-timestamp": "1763717520",
         *           "webhook-signature": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="
         *         },
         *         "body": "{\"type\":\"invoice.paid\",\"timestamp\":\"2026-11-21T09:30:00.000Z\",\"data\":{\"event_id\":\"evt_01m806mp6v3c2b1a0z9y8x7w6v\",\"payload\":{\"invoice_id\":\"inv_2041\"}}}",
         *         "body_truncated": false
         *       },
         *       "response_headers": {
         *         "content-type": "text/plain"
         *       }
         *     }
         */
        WebhookDelivery: {
            id: string;
            event_id: string;
            /** @description 1 for the first attempt at this event; retries and manual replays count on */
            attempt: number;
            /** @description null when no answer came (timeout, refused, unreachable) */
            status_code: number | null;
            /** @description A 2xx answer; a 3xx is a failure (redirects are not followed) */
            success: boolean;
            duration_ms: number;
            /** @description The first 1 KB of the answer */
            response_excerpt: string | null;
            /** @description Why no answer came: outbound_timeout, outbound_refused, outbound_failed and a message */
            error: string | null;
            /** @description ISO 8601 date-time */
            created_at: string;
            /** @description When this event is tried again; null when it is not */
            next_attempt_at: string | null;
            /** @description The delivered event's type (null for attempts logged before svc kept it) */
            event_type: string | null;
            /** @description What was sent (null for attempts logged before svc kept it) */
            request: {
                /** @description The headers sent: content-type, user-agent, webhook-id, webhook-timestamp and webhook-signature (signatures only, never the secret) */
                headers: {
                    [key: string]: string;
                };
                /** @description The body sent, byte for byte (cut at 64 KiB) */
                body: string;
                /** @description Whether `body` was cut */
                body_truncated: boolean;
            } | null;
            /** @description The answer's headers; null when no answer came */
            response_headers: {
                [key: string]: string;
            } | null;
        };
        /**
         * @example {
         *       "data": [
         *         {
         *           "id": "whd_01m806mp6w1x4c7v0b3n6m9q2s",
         *           "event_id": "evt_01m806mp6v3c2b1a0z9y8x7w6v",
         *           "attempt": 1,
         *           "status_code": 500,
         *           "success": false,
         *           "duration_ms": 42,
         *           "response_excerpt": "upstream unavailable",
         *           "error": null,
         *           "created_at": "2026-11-21T09:32:00.230Z",
         *           "next_attempt_at": "2026-11-21T09:32:05.230Z",
         *           "event_type": "invoice.paid",
         *           "request": {
         *             "headers": {
         *               "content-type": "application/json",
         *               "user-agent": "svc-webhooks",
         *               "webhook-id": "msg_evt_01m806mp6v3c2b1a0z9y8x7w6v_sub_01m806mp6t2k9d8c7b6a5z4y3x",
         *               "webhook-timestamp": "1763717520",
         *               "webhook-signature": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="
         *             },
         *             "body": "{\"type\":\"invoice.paid\",\"timestamp\":\"2026-11-21T09:30:00.000Z\",\"data\":{\"event_id\":\"evt_01m806mp6v3c2b1a0z9y8x7w6v\",\"payload\":{\"invoice_id\":\"inv_2041\"}}}",
         *             "body_truncated": false
         *           },
         *           "response_headers": {
         *             "content-type": "text/plain"
         *           }
         *         }
         *       ],
         *       "pagination": {
         *         "has_more": false,
         *         "next_cursor": null
         *       }
         *     }
         */
        WebhookDeliveryList: {
            data: components["schemas"]["WebhookDelivery"][];
            pagination: components["schemas"]["PaginationInfo"];
        };
        /**
         * @example {
         *       "webhook_id": "sub_01m806mp6t2k9d8c7b6a5z4y3x",
         *       "event_id": "evt_01m806mp6v3c2b1a0z9y8x7w6v",
         *       "status": "queued"
         *     }
         */
        WebhookRetryQueued: {
            webhook_id: string;
            event_id: string;
            /**
             * @description One more attempt is queued; it appears in the deliveries list when made
             * @enum {string}
             */
            status: "queued";
        };
        /**
         * @example {
         *       "secret": "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oDkq0mXh2XJ0w=",
         *       "previous_expires_at": "2026-11-22T09:30:00.000Z"
         *     }
         */
        RotatedWebhookSecret: {
            /** @description The new secret; deliveries are signed with it from now on */
            secret: string;
            /** @description Until then deliveries also carry a signature with the previous secret */
            previous_expires_at: string;
        };
        /**
         * @example {
         *       "id": "sub_01m806mp6t2k9d8c7b6a5z4y3x",
         *       "deleted": true
         *     }
         */
        WebhookDeleted: {
            id: string;
            /** @enum {boolean} */
            deleted: true;
        };
        /**
         * @example {
         *       "type": "https://svc.example.com/docs/errors#forbidden",
         *       "title": "Forbidden",
         *       "status": 403,
         *       "detail": "The delegation does not grant svc_api:passports:write.",
         *       "instance": "/v1/passports",
         *       "request_id": "req_01m806mp6s05dka2k9fejrktqr",
         *       "missing_capability": "svc_api:passports:write"
         *     }
         */
        ProblemDetails: {
            /** Format: uri */
            type: string;
            title: string;
            status: number;
            detail: string;
            instance?: string;
            request_id?: string;
            incident_id?: string;
            /** Format: uri */
            documentation_url?: string;
            errors?: {
                field: string;
                code: string;
                message: string;
                expected?: string;
                received?: string;
            }[];
            remediation?: {
                step: number;
                description: string;
                /** Format: uri */
                link?: string;
            }[];
        } & {
            [key: string]: unknown;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Healthy */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "ok" | "unavailable";
                        version: string;
                        /** @description sqlite or postgresql */
                        database: string;
                    };
                };
            };
            /** @description The database does not answer */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "ok" | "unavailable";
                        version: string;
                        /** @description sqlite or postgresql */
                        database: string;
                    };
                };
            };
        };
    };
    getOpenApi: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OpenAPI 3.0.3 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        openapi: string;
                        info: {
                            [key: string]: unknown;
                        };
                        paths: {
                            [key: string]: unknown;
                        };
                    } & {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    listPassports: {
        parameters: {
            query?: {
                /** @description Page size, 1 to 100. */
                limit?: number;
                /** @description Opaque cursor from the previous page's `pagination.next_cursor`. */
                cursor?: string;
                /** @description Only passports of this type */
                type?: "agent" | "organization" | "human";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PassportList"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/passports",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/passports",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/passports",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/passports",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/passports",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/passports",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    createPassport: {
        parameters: {
            query?: never;
            header?: {
                /** @description Repeat a POST safely: the same key and body return the first response. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreatePassportRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Passport"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/passports",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/passports",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/passports",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/passports",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `payload_too_large` (Payload too large): The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes). See /docs/errors#payload_too_large. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#payload_too_large",
                     *       "title": "Payload too large",
                     *       "status": 413,
                     *       "detail": "The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes).",
                     *       "instance": "/v1/passports",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8). See /docs/errors#unsupported_media_type. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unsupported_media_type",
                     *       "title": "Unsupported media type",
                     *       "status": 415,
                     *       "detail": "The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8).",
                     *       "instance": "/v1/passports",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `idempotency_key_reused` (Idempotency key reused): The Idempotency-Key was used before with a different request. See /docs/errors#idempotency_key_reused. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#idempotency_key_reused",
                     *       "title": "Idempotency key reused",
                     *       "status": 422,
                     *       "detail": "The Idempotency-Key was used before with a different request.",
                     *       "instance": "/v1/passports",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/passports",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/passports",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/passports",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getPassport: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                did: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Passport"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/passports/{did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/passports/{did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/passports/{did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/passports/{did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/passports/{did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/passports/{did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/passports/{did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    updatePassport: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                did: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UpdatePassportRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Passport"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/passports/{did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/passports/{did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/passports/{did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/passports/{did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/passports/{did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `payload_too_large` (Payload too large): The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes). See /docs/errors#payload_too_large. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#payload_too_large",
                     *       "title": "Payload too large",
                     *       "status": 413,
                     *       "detail": "The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes).",
                     *       "instance": "/v1/passports/{did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8). See /docs/errors#unsupported_media_type. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unsupported_media_type",
                     *       "title": "Unsupported media type",
                     *       "status": 415,
                     *       "detail": "The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8).",
                     *       "instance": "/v1/passports/{did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/passports/{did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/passports/{did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/passports/{did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    exchangeSession: {
        parameters: {
            query?: never;
            header?: {
                /** @description Repeat a POST safely: the same key and body return the first response. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["SessionExchangeRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionExchangeResponse"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/sessions/exchange",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/sessions/exchange",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden.
             *
             *     `tier_too_low` (Tier too low): The session exchange required a verification or identity tier the passport does not have (`tier`, `actual_tier`, `required_tier`). See /docs/errors#tier_too_low.
             */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/sessions/exchange",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/sessions/exchange",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `payload_too_large` (Payload too large): The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes). See /docs/errors#payload_too_large. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#payload_too_large",
                     *       "title": "Payload too large",
                     *       "status": 413,
                     *       "detail": "The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes).",
                     *       "instance": "/v1/sessions/exchange",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8). See /docs/errors#unsupported_media_type. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unsupported_media_type",
                     *       "title": "Unsupported media type",
                     *       "status": 415,
                     *       "detail": "The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8).",
                     *       "instance": "/v1/sessions/exchange",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `idempotency_key_reused` (Idempotency key reused): The Idempotency-Key was used before with a different request. See /docs/errors#idempotency_key_reused. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#idempotency_key_reused",
                     *       "title": "Idempotency key reused",
                     *       "status": 422,
                     *       "detail": "The Idempotency-Key was used before with a different request.",
                     *       "instance": "/v1/sessions/exchange",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/sessions/exchange",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/sessions/exchange",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/sessions/exchange",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    createDelegationToken: {
        parameters: {
            query?: never;
            header?: {
                /** @description Repeat a POST safely: the same key and body return the first response. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DelegationTokenRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionExchangeResponse"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/delegation-tokens",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/delegation-tokens",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/delegation-tokens",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/delegation-tokens",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `payload_too_large` (Payload too large): The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes). See /docs/errors#payload_too_large. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#payload_too_large",
                     *       "title": "Payload too large",
                     *       "status": 413,
                     *       "detail": "The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes).",
                     *       "instance": "/v1/delegation-tokens",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8). See /docs/errors#unsupported_media_type. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unsupported_media_type",
                     *       "title": "Unsupported media type",
                     *       "status": 415,
                     *       "detail": "The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8).",
                     *       "instance": "/v1/delegation-tokens",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `idempotency_key_reused` (Idempotency key reused): The Idempotency-Key was used before with a different request. See /docs/errors#idempotency_key_reused. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#idempotency_key_reused",
                     *       "title": "Idempotency key reused",
                     *       "status": 422,
                     *       "detail": "The Idempotency-Key was used before with a different request.",
                     *       "instance": "/v1/delegation-tokens",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/delegation-tokens",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/delegation-tokens",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/delegation-tokens",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    listDelegations: {
        parameters: {
            query?: {
                /** @description Page size, 1 to 100. */
                limit?: number;
                /** @description Opaque cursor from the previous page's `pagination.next_cursor`. */
                cursor?: string;
                status?: "active" | "expired" | "revoked";
                /** @description member: a console member's standing grant, from which their sessions and the API keys they create derive; execution: the delegation an agent run acts under, derived from its invoker's (revoked with reason run_ended when the run ends); trigger: the authority an agent's event triggers carry, derived from whoever deployed or activated it, narrowed to its manifest */
                kind?: "api_key" | "delegation_token" | "session" | "member" | "execution" | "trigger";
                delegate_did?: string;
                parent_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DelegationList"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/delegations",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/delegations",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/delegations",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/delegations",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/delegations",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/delegations",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getDelegation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DelegationDetail"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/delegations/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/delegations/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/delegations/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/delegations/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/delegations/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/delegations/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/delegations/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    revokeDelegation: {
        parameters: {
            query?: never;
            header?: {
                /** @description Repeat a POST safely: the same key and body return the first response. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["RevokeRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RevocationRecord"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/delegations/{id}/revoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/delegations/{id}/revoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/delegations/{id}/revoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/delegations/{id}/revoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/delegations/{id}/revoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `payload_too_large` (Payload too large): The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes). See /docs/errors#payload_too_large. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#payload_too_large",
                     *       "title": "Payload too large",
                     *       "status": 413,
                     *       "detail": "The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes).",
                     *       "instance": "/v1/delegations/{id}/revoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8). See /docs/errors#unsupported_media_type. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unsupported_media_type",
                     *       "title": "Unsupported media type",
                     *       "status": 415,
                     *       "detail": "The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8).",
                     *       "instance": "/v1/delegations/{id}/revoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `idempotency_key_reused` (Idempotency key reused): The Idempotency-Key was used before with a different request. See /docs/errors#idempotency_key_reused. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#idempotency_key_reused",
                     *       "title": "Idempotency key reused",
                     *       "status": 422,
                     *       "detail": "The Idempotency-Key was used before with a different request.",
                     *       "instance": "/v1/delegations/{id}/revoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/delegations/{id}/revoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/delegations/{id}/revoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/delegations/{id}/revoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    listRevocations: {
        parameters: {
            query?: {
                /** @description Page size, 1 to 100. */
                limit?: number;
                /** @description Opaque cursor from the previous page's `pagination.next_cursor`. */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RevocationList"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/revocations",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/revocations",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/revocations",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/revocations",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/revocations",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/revocations",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    matchCapabilities: {
        parameters: {
            query?: never;
            header?: {
                /** @description Repeat a POST safely: the same key and body return the first response. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CapabilityMatchRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CapabilityMatchResponse"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/capabilities/match",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/capabilities/match",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/capabilities/match",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/capabilities/match",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `payload_too_large` (Payload too large): The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes). See /docs/errors#payload_too_large. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#payload_too_large",
                     *       "title": "Payload too large",
                     *       "status": 413,
                     *       "detail": "The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes).",
                     *       "instance": "/v1/capabilities/match",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8). See /docs/errors#unsupported_media_type. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unsupported_media_type",
                     *       "title": "Unsupported media type",
                     *       "status": 415,
                     *       "detail": "The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8).",
                     *       "instance": "/v1/capabilities/match",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `idempotency_key_reused` (Idempotency key reused): The Idempotency-Key was used before with a different request. See /docs/errors#idempotency_key_reused. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#idempotency_key_reused",
                     *       "title": "Idempotency key reused",
                     *       "status": 422,
                     *       "detail": "The Idempotency-Key was used before with a different request.",
                     *       "instance": "/v1/capabilities/match",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/capabilities/match",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/capabilities/match",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/capabilities/match",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    listCpOrgs: {
        parameters: {
            query?: {
                /** @description Page size, 1 to 100. */
                limit?: number;
                /** @description Opaque cursor from the previous page's `pagination.next_cursor`. */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CpOrgList"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/cp/orgs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/cp/orgs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/cp/orgs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/cp/orgs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/cp/orgs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/cp/orgs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    createCpOrg: {
        parameters: {
            query?: never;
            header?: {
                /** @description Repeat a POST safely: the same key and body return the first response. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateCpOrgRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CpOrg"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/cp/orgs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/cp/orgs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/cp/orgs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/cp/orgs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `payload_too_large` (Payload too large): The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes). See /docs/errors#payload_too_large. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#payload_too_large",
                     *       "title": "Payload too large",
                     *       "status": 413,
                     *       "detail": "The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes).",
                     *       "instance": "/v1/cp/orgs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8). See /docs/errors#unsupported_media_type. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unsupported_media_type",
                     *       "title": "Unsupported media type",
                     *       "status": 415,
                     *       "detail": "The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8).",
                     *       "instance": "/v1/cp/orgs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `idempotency_key_reused` (Idempotency key reused): The Idempotency-Key was used before with a different request. See /docs/errors#idempotency_key_reused. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#idempotency_key_reused",
                     *       "title": "Idempotency key reused",
                     *       "status": 422,
                     *       "detail": "The Idempotency-Key was used before with a different request.",
                     *       "instance": "/v1/cp/orgs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/cp/orgs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/cp/orgs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/cp/orgs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getCpOrg: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org_did: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CpOrg"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/cp/orgs/{org_did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/cp/orgs/{org_did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/cp/orgs/{org_did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/cp/orgs/{org_did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/cp/orgs/{org_did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/cp/orgs/{org_did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/cp/orgs/{org_did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    updateCpOrg: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                org_did: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UpdateCpOrgRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CpOrg"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/cp/orgs/{org_did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/cp/orgs/{org_did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/cp/orgs/{org_did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/cp/orgs/{org_did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/cp/orgs/{org_did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `payload_too_large` (Payload too large): The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes). See /docs/errors#payload_too_large. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#payload_too_large",
                     *       "title": "Payload too large",
                     *       "status": 413,
                     *       "detail": "The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes).",
                     *       "instance": "/v1/cp/orgs/{org_did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8). See /docs/errors#unsupported_media_type. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unsupported_media_type",
                     *       "title": "Unsupported media type",
                     *       "status": 415,
                     *       "detail": "The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8).",
                     *       "instance": "/v1/cp/orgs/{org_did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/cp/orgs/{org_did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/cp/orgs/{org_did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/cp/orgs/{org_did}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    listProvenance: {
        parameters: {
            query?: {
                /** @description Page size, 1 to 100. */
                limit?: number;
                /** @description Opaque cursor from the previous page's `pagination.next_cursor`. */
                cursor?: string;
                /** @description actor_did */
                actor?: string;
                /** @description delegation_id */
                delegation?: string;
                /** @description grantor_did */
                grantor?: string;
                /** @description resource_id */
                resource?: string;
                resource_type?: string;
                decision?: "allowed" | "denied";
                /** @description Operations starting with this, e.g. `POST /v1/passports`, `GET /v1/provenance` or `TRPC identity.` */
                operation?: string;
                /** @description Records at or after this time */
                from?: string;
                /** @description Records before this time */
                to?: string;
                /** @description `exclude` leaves out the console's own allowed reads (TRPC queries), which a console session makes on every page view; they stay recorded */
                console_reads?: "include" | "exclude";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProvenanceList"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/provenance",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/provenance",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/provenance",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/provenance",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/provenance",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/provenance",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getProvenanceCheckpoint: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/provenance/checkpoint",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/provenance/checkpoint",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/provenance/checkpoint",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `no_checkpoint_yet` (No checkpoint yet): The ledger has not signed its first checkpoint yet (a fresh service signs one within a second of its first record), so there is nothing to prove against. See /docs/errors#no_checkpoint_yet. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#no_checkpoint_yet",
                     *       "title": "No checkpoint yet",
                     *       "status": 409,
                     *       "detail": "The ledger has not signed its first checkpoint yet (a fresh service signs one within a second of its first record), so there is nothing to prove against.",
                     *       "instance": "/v1/provenance/checkpoint",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/provenance/checkpoint",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/provenance/checkpoint",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/provenance/checkpoint",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getProvenanceVerifierKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/provenance/verifier-key",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/provenance/verifier-key",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/provenance/verifier-key",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/provenance/verifier-key",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/provenance/verifier-key",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/provenance/verifier-key",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getProvenanceConsistency: {
        parameters: {
            query: {
                /** @description The older tree size */
                from: number;
                /** @description The newer tree size */
                to: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConsistencyProof"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/provenance/consistency",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/provenance/consistency",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/provenance/consistency",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `no_checkpoint_yet` (No checkpoint yet): The ledger has not signed its first checkpoint yet (a fresh service signs one within a second of its first record), so there is nothing to prove against. See /docs/errors#no_checkpoint_yet. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#no_checkpoint_yet",
                     *       "title": "No checkpoint yet",
                     *       "status": 409,
                     *       "detail": "The ledger has not signed its first checkpoint yet (a fresh service signs one within a second of its first record), so there is nothing to prove against.",
                     *       "instance": "/v1/provenance/consistency",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/provenance/consistency",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/provenance/consistency",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/provenance/consistency",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    exportProvenance: {
        parameters: {
            query?: {
                /** @description First leaf index (inclusive) */
                from?: number;
                /** @description Last leaf index (exclusive); default: the latest checkpoint's size */
                to?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/x-ndjson": string;
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/provenance/export",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/provenance/export",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/provenance/export",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/provenance/export",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/provenance/export",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/provenance/export",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getProvenance: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProvenanceRecord"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/provenance/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/provenance/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/provenance/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/provenance/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/provenance/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/provenance/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/provenance/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getProvenanceProof: {
        parameters: {
            query?: {
                /** @description Prove against the checkpoint of this size (default: the latest) */
                tree_size?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InclusionProof"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/provenance/{id}/proof",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/provenance/{id}/proof",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/provenance/{id}/proof",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/provenance/{id}/proof",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `no_checkpoint_yet` (No checkpoint yet): The ledger has not signed its first checkpoint yet (a fresh service signs one within a second of its first record), so there is nothing to prove against. See /docs/errors#no_checkpoint_yet.
             *
             *     `not_yet_checkpointed` (Not yet checkpointed): The record is newer than the latest signed checkpoint, so no inclusion proof exists for it yet. See /docs/errors#not_yet_checkpointed.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#no_checkpoint_yet",
                     *       "title": "No checkpoint yet",
                     *       "status": 409,
                     *       "detail": "The ledger has not signed its first checkpoint yet (a fresh service signs one within a second of its first record), so there is nothing to prove against.",
                     *       "instance": "/v1/provenance/{id}/proof",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/provenance/{id}/proof",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/provenance/{id}/proof",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/provenance/{id}/proof",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getDeploymentCompliance: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeploymentComplianceResponse"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/compliance/deployment",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/compliance/deployment",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/compliance/deployment",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/compliance/deployment",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/compliance/deployment",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/compliance/deployment",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getWalledGardenStatus: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WalledGardenStatus"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/compliance/walled-garden",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/compliance/walled-garden",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/compliance/walled-garden",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/compliance/walled-garden",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/compliance/walled-garden",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/compliance/walled-garden",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    listAgents: {
        parameters: {
            query?: {
                /** @description Page size, 1 to 100. */
                limit?: number;
                /** @description Opaque cursor from the previous page's `pagination.next_cursor`. */
                cursor?: string;
                /** @description Only agents in this status */
                status?: "active" | "inactive" | "deploying";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentListResponse"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/agents",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/agents",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/agents",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/agents",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/agents",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/agents",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    deployAgent: {
        parameters: {
            query?: never;
            header?: {
                /** @description Repeat a POST safely: the same key and body return the first response. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AgentDeployRequest"];
            };
        };
        responses: {
            /** @description Success (see the description for when) */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentDeployResponse"];
                };
            };
            /** @description Success */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentDeployResponse"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/agents/deploy",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/agents/deploy",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/agents/deploy",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/agents/deploy",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `payload_too_large` (Payload too large): The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes). See /docs/errors#payload_too_large. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#payload_too_large",
                     *       "title": "Payload too large",
                     *       "status": 413,
                     *       "detail": "The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes).",
                     *       "instance": "/v1/agents/deploy",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8). See /docs/errors#unsupported_media_type. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unsupported_media_type",
                     *       "title": "Unsupported media type",
                     *       "status": 415,
                     *       "detail": "The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8).",
                     *       "instance": "/v1/agents/deploy",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `idempotency_key_reused` (Idempotency key reused): The Idempotency-Key was used before with a different request. See /docs/errors#idempotency_key_reused. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#idempotency_key_reused",
                     *       "title": "Idempotency key reused",
                     *       "status": 422,
                     *       "detail": "The Idempotency-Key was used before with a different request.",
                     *       "instance": "/v1/agents/deploy",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/agents/deploy",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/agents/deploy",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/agents/deploy",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getAgentStatus: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentStatusResponse"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/agents/{id}/status",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/agents/{id}/status",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/agents/{id}/status",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/agents/{id}/status",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/agents/{id}/status",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/agents/{id}/status",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/agents/{id}/status",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    activateAgent: {
        parameters: {
            query?: never;
            header?: {
                /** @description Repeat a POST safely: the same key and body return the first response. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentStatusResponse"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/agents/{id}/activate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/agents/{id}/activate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/agents/{id}/activate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/agents/{id}/activate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/agents/{id}/activate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `idempotency_key_reused` (Idempotency key reused): The Idempotency-Key was used before with a different request. See /docs/errors#idempotency_key_reused. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#idempotency_key_reused",
                     *       "title": "Idempotency key reused",
                     *       "status": 422,
                     *       "detail": "The Idempotency-Key was used before with a different request.",
                     *       "instance": "/v1/agents/{id}/activate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/agents/{id}/activate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/agents/{id}/activate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/agents/{id}/activate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    deactivateAgent: {
        parameters: {
            query?: never;
            header?: {
                /** @description Repeat a POST safely: the same key and body return the first response. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentStatusResponse"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/agents/{id}/deactivate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/agents/{id}/deactivate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/agents/{id}/deactivate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/agents/{id}/deactivate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/agents/{id}/deactivate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `idempotency_key_reused` (Idempotency key reused): The Idempotency-Key was used before with a different request. See /docs/errors#idempotency_key_reused. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#idempotency_key_reused",
                     *       "title": "Idempotency key reused",
                     *       "status": 422,
                     *       "detail": "The Idempotency-Key was used before with a different request.",
                     *       "instance": "/v1/agents/{id}/deactivate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/agents/{id}/deactivate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/agents/{id}/deactivate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/agents/{id}/deactivate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    invokeAgent: {
        parameters: {
            query?: never;
            header?: {
                /** @description Repeat a POST safely: the same key and body return the first response. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["InvokeRequest"];
            };
        };
        responses: {
            /** @description Success */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AsyncExecution"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/agents/{id}/invoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/agents/{id}/invoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/agents/{id}/invoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/agents/{id}/invoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/agents/{id}/invoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `payload_too_large` (Payload too large): The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes). See /docs/errors#payload_too_large. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#payload_too_large",
                     *       "title": "Payload too large",
                     *       "status": 413,
                     *       "detail": "The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes).",
                     *       "instance": "/v1/agents/{id}/invoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8). See /docs/errors#unsupported_media_type. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unsupported_media_type",
                     *       "title": "Unsupported media type",
                     *       "status": 415,
                     *       "detail": "The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8).",
                     *       "instance": "/v1/agents/{id}/invoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `idempotency_key_reused` (Idempotency key reused): The Idempotency-Key was used before with a different request. See /docs/errors#idempotency_key_reused. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#idempotency_key_reused",
                     *       "title": "Idempotency key reused",
                     *       "status": 422,
                     *       "detail": "The Idempotency-Key was used before with a different request.",
                     *       "instance": "/v1/agents/{id}/invoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/agents/{id}/invoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/agents/{id}/invoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/agents/{id}/invoke",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    listExecutions: {
        parameters: {
            query?: {
                /** @description Page size, 1 to 100. */
                limit?: number;
                /** @description Opaque cursor from the previous page's `pagination.next_cursor`. */
                cursor?: string;
                /** @description Only executions in this status */
                status?: "queued" | "processing" | "completed" | "failed" | "cancelled";
                /** @description Only executions of this agent */
                agent_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ExecutionList"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/executions",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/executions",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/executions",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/executions",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/executions",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/executions",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getCallbackSecret: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CallbackSecret"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/executions/callback-secret",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/executions/callback-secret",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/executions/callback-secret",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/executions/callback-secret",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/executions/callback-secret",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/executions/callback-secret",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    rotateCallbackSecret: {
        parameters: {
            query?: never;
            header?: {
                /** @description Repeat a POST safely: the same key and body return the first response. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RotatedCallbackSecret"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/executions/callback-secret/rotate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/executions/callback-secret/rotate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/executions/callback-secret/rotate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/executions/callback-secret/rotate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `idempotency_key_reused` (Idempotency key reused): The Idempotency-Key was used before with a different request. See /docs/errors#idempotency_key_reused. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#idempotency_key_reused",
                     *       "title": "Idempotency key reused",
                     *       "status": 422,
                     *       "detail": "The Idempotency-Key was used before with a different request.",
                     *       "instance": "/v1/executions/callback-secret/rotate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/executions/callback-secret/rotate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/executions/callback-secret/rotate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/executions/callback-secret/rotate",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getExecution: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AsyncExecution"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/executions/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/executions/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/executions/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/executions/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/executions/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/executions/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/executions/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    cancelExecution: {
        parameters: {
            query?: never;
            header?: {
                /** @description Repeat a POST safely: the same key and body return the first response. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AsyncExecution"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/executions/{id}/cancel",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/executions/{id}/cancel",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/executions/{id}/cancel",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/executions/{id}/cancel",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/executions/{id}/cancel",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `idempotency_key_reused` (Idempotency key reused): The Idempotency-Key was used before with a different request. See /docs/errors#idempotency_key_reused. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#idempotency_key_reused",
                     *       "title": "Idempotency key reused",
                     *       "status": 422,
                     *       "detail": "The Idempotency-Key was used before with a different request.",
                     *       "instance": "/v1/executions/{id}/cancel",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/executions/{id}/cancel",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/executions/{id}/cancel",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/executions/{id}/cancel",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    listCallbackAttempts: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CallbackAttemptList"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/executions/{id}/callback-attempts",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/executions/{id}/callback-attempts",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/executions/{id}/callback-attempts",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/executions/{id}/callback-attempts",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/executions/{id}/callback-attempts",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/executions/{id}/callback-attempts",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/executions/{id}/callback-attempts",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    listExecutionLogs: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ExecutionLogList"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/executions/{id}/logs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/executions/{id}/logs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/executions/{id}/logs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/executions/{id}/logs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/executions/{id}/logs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/executions/{id}/logs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/executions/{id}/logs",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    listWebhooks: {
        parameters: {
            query?: {
                /** @description Page size, 1 to 100. */
                limit?: number;
                /** @description Opaque cursor from the previous page's `pagination.next_cursor`. */
                cursor?: string;
                /** @description Only subscriptions of this kind */
                kind?: "webhook" | "agent_trigger";
                /** @description Only subscriptions in this status */
                status?: "active" | "disabled";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SubscriptionList"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/webhooks",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/webhooks",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/webhooks",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/webhooks",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/webhooks",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/webhooks",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Repeat a POST safely: the same key and body return the first response. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookCreateRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookWithSecret"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/webhooks",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/webhooks",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/webhooks",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/webhooks",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `payload_too_large` (Payload too large): The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes). See /docs/errors#payload_too_large. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#payload_too_large",
                     *       "title": "Payload too large",
                     *       "status": 413,
                     *       "detail": "The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes).",
                     *       "instance": "/v1/webhooks",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8). See /docs/errors#unsupported_media_type. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unsupported_media_type",
                     *       "title": "Unsupported media type",
                     *       "status": 415,
                     *       "detail": "The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8).",
                     *       "instance": "/v1/webhooks",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `idempotency_key_reused` (Idempotency key reused): The Idempotency-Key was used before with a different request. See /docs/errors#idempotency_key_reused. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#idempotency_key_reused",
                     *       "title": "Idempotency key reused",
                     *       "status": 422,
                     *       "detail": "The Idempotency-Key was used before with a different request.",
                     *       "instance": "/v1/webhooks",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/webhooks",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/webhooks",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/webhooks",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeleted"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    updateWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookUpdateRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `payload_too_large` (Payload too large): The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes). See /docs/errors#payload_too_large. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#payload_too_large",
                     *       "title": "Payload too large",
                     *       "status": 413,
                     *       "detail": "The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes).",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8). See /docs/errors#unsupported_media_type. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unsupported_media_type",
                     *       "title": "Unsupported media type",
                     *       "status": 415,
                     *       "detail": "The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8).",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/webhooks/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: {
                /** @description Page size, 1 to 100. */
                limit?: number;
                /** @description Opaque cursor from the previous page's `pagination.next_cursor`. */
                cursor?: string;
                /** @description Only the attempts at this event */
                event_id?: string;
                /** @description Only successful (true) or failed (false) attempts */
                success?: "true" | "false";
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeliveryList"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/webhooks/{id}/deliveries",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/webhooks/{id}/deliveries",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/webhooks/{id}/deliveries",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/webhooks/{id}/deliveries",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/webhooks/{id}/deliveries",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/webhooks/{id}/deliveries",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/webhooks/{id}/deliveries",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getWebhookDelivery: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                delivery_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDelivery"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/webhooks/{id}/deliveries/{delivery_id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/webhooks/{id}/deliveries/{delivery_id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/webhooks/{id}/deliveries/{delivery_id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/webhooks/{id}/deliveries/{delivery_id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/webhooks/{id}/deliveries/{delivery_id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/webhooks/{id}/deliveries/{delivery_id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/webhooks/{id}/deliveries/{delivery_id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    retryWebhookDelivery: {
        parameters: {
            query?: never;
            header?: {
                /** @description Repeat a POST safely: the same key and body return the first response. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: string;
                delivery_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookRetryQueued"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/webhooks/{id}/deliveries/{delivery_id}/retry",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/webhooks/{id}/deliveries/{delivery_id}/retry",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/webhooks/{id}/deliveries/{delivery_id}/retry",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/webhooks/{id}/deliveries/{delivery_id}/retry",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/webhooks/{id}/deliveries/{delivery_id}/retry",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `idempotency_key_reused` (Idempotency key reused): The Idempotency-Key was used before with a different request. See /docs/errors#idempotency_key_reused. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#idempotency_key_reused",
                     *       "title": "Idempotency key reused",
                     *       "status": 422,
                     *       "detail": "The Idempotency-Key was used before with a different request.",
                     *       "instance": "/v1/webhooks/{id}/deliveries/{delivery_id}/retry",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/webhooks/{id}/deliveries/{delivery_id}/retry",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/webhooks/{id}/deliveries/{delivery_id}/retry",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/webhooks/{id}/deliveries/{delivery_id}/retry",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    rotateWebhookSecret: {
        parameters: {
            query?: never;
            header?: {
                /** @description Repeat a POST safely: the same key and body return the first response. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RotatedWebhookSecret"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/webhooks/{id}/rotate-secret",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/webhooks/{id}/rotate-secret",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/webhooks/{id}/rotate-secret",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/webhooks/{id}/rotate-secret",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/webhooks/{id}/rotate-secret",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `idempotency_key_reused` (Idempotency key reused): The Idempotency-Key was used before with a different request. See /docs/errors#idempotency_key_reused. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#idempotency_key_reused",
                     *       "title": "Idempotency key reused",
                     *       "status": 422,
                     *       "detail": "The Idempotency-Key was used before with a different request.",
                     *       "instance": "/v1/webhooks/{id}/rotate-secret",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/webhooks/{id}/rotate-secret",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/webhooks/{id}/rotate-secret",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/webhooks/{id}/rotate-secret",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    ingestEvent: {
        parameters: {
            query?: never;
            header?: {
                /** @description Repeat a POST safely: the same key and body return the first response. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EventBody"];
            };
        };
        responses: {
            /** @description Success */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EventAccepted"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/events/ingest",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/events/ingest",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/events/ingest",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/events/ingest",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `payload_too_large` (Payload too large): The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes). See /docs/errors#payload_too_large. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#payload_too_large",
                     *       "title": "Payload too large",
                     *       "status": 413,
                     *       "detail": "The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes).",
                     *       "instance": "/v1/events/ingest",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8). See /docs/errors#unsupported_media_type. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unsupported_media_type",
                     *       "title": "Unsupported media type",
                     *       "status": 415,
                     *       "detail": "The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8).",
                     *       "instance": "/v1/events/ingest",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `idempotency_key_reused` (Idempotency key reused): The Idempotency-Key was used before with a different request. See /docs/errors#idempotency_key_reused. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#idempotency_key_reused",
                     *       "title": "Idempotency key reused",
                     *       "status": 422,
                     *       "detail": "The Idempotency-Key was used before with a different request.",
                     *       "instance": "/v1/events/ingest",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/events/ingest",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/events/ingest",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/events/ingest",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    emitEvent: {
        parameters: {
            query?: never;
            header?: {
                /** @description Repeat a POST safely: the same key and body return the first response. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EventBody"];
            };
        };
        responses: {
            /** @description Success */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EventAccepted"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/events/emit",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/events/emit",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/events/emit",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `conflict` (Conflict): A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request. See /docs/errors#conflict.
             *
             *     `illegal_state_transition` (Illegal state transition): The resource's state does not allow the requested change (`current_state`, `requested_state`). See /docs/errors#illegal_state_transition.
             */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#conflict",
                     *       "title": "Conflict",
                     *       "status": 409,
                     *       "detail": "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
                     *       "instance": "/v1/events/emit",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `payload_too_large` (Payload too large): The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes). See /docs/errors#payload_too_large. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#payload_too_large",
                     *       "title": "Payload too large",
                     *       "status": 413,
                     *       "detail": "The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes).",
                     *       "instance": "/v1/events/emit",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8). See /docs/errors#unsupported_media_type. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unsupported_media_type",
                     *       "title": "Unsupported media type",
                     *       "status": 415,
                     *       "detail": "The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8).",
                     *       "instance": "/v1/events/emit",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `idempotency_key_reused` (Idempotency key reused): The Idempotency-Key was used before with a different request. See /docs/errors#idempotency_key_reused. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#idempotency_key_reused",
                     *       "title": "Idempotency key reused",
                     *       "status": 422,
                     *       "detail": "The Idempotency-Key was used before with a different request.",
                     *       "instance": "/v1/events/emit",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/events/emit",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/events/emit",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/events/emit",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    listEvents: {
        parameters: {
            query?: {
                /** @description Page size, 1 to 100. */
                limit?: number;
                /** @description Opaque cursor from the previous page's `pagination.next_cursor`. */
                cursor?: string;
                /** @description Only events of this type */
                type?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EventList"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/events",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/events",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/events",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/events",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/events",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/events",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getEvent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Event"];
                };
            };
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#validation_failed",
                     *       "title": "Validation failed",
                     *       "status": 400,
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
                     *       "instance": "/v1/events/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `unauthenticated` (Authentication required): The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked. See /docs/errors#unauthenticated. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#unauthenticated",
                     *       "title": "Authentication required",
                     *       "status": 401,
                     *       "detail": "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
                     *       "instance": "/v1/events/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `forbidden` (Forbidden): The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API. See /docs/errors#forbidden. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#forbidden",
                     *       "title": "Forbidden",
                     *       "status": 403,
                     *       "detail": "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
                     *       "instance": "/v1/events/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `not_found` (Not found): No such resource in your organization (resources of other organizations are reported the same way), or no such API route. See /docs/errors#not_found. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#not_found",
                     *       "title": "Not found",
                     *       "status": 404,
                     *       "detail": "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
                     *       "instance": "/v1/events/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `rate_limited` (Too many requests): The per-minute limit for this credential (or, before sign-in, this address) and route was reached. See /docs/errors#rate_limited. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#rate_limited",
                     *       "title": "Too many requests",
                     *       "status": 429,
                     *       "detail": "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
                     *       "instance": "/v1/events/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description `internal_error` (Internal error): The service failed. `incident_id` identifies the failure in the service's log. See /docs/errors#internal_error. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#internal_error",
                     *       "title": "Internal error",
                     *       "status": 500,
                     *       "detail": "The service failed. `incident_id` identifies the failure in the service's log.",
                     *       "instance": "/v1/events/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /**
             * @description `database_unavailable` (Database unavailable): The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call. See /docs/errors#database_unavailable.
             *
             *     `storage_full` (Storage full): The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer. See /docs/errors#storage_full.
             */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "https://svc.example.com/docs/errors#database_unavailable",
                     *       "title": "Database unavailable",
                     *       "status": 503,
                     *       "detail": "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
                     *       "instance": "/v1/events/{id}",
                     *       "request_id": "req_01m806mp6s05dka2k9fejrktqr"
                     *     }
                     */
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
}
