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
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
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
            /** @description Requested capabilities; when empty, svc_api:reasoning:think, svc_api:agents:read, svc_api:agents:invoke */
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
             * @description member: a console member's standing grant, from which their sessions and the API keys they create derive
             * @enum {string}
             */
            kind: "api_key" | "delegation_token" | "session" | "member";
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
             * @description member: a console member's standing grant, from which their sessions and the API keys they create derive
             * @enum {string}
             */
            kind: "api_key" | "delegation_token" | "session" | "member";
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON. See /docs/errors#unsupported_media_type. */
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
                     *       "detail": "The body is not declared as JSON.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON. See /docs/errors#unsupported_media_type. */
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
                     *       "detail": "The body is not declared as JSON.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON. See /docs/errors#unsupported_media_type. */
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
                     *       "detail": "The body is not declared as JSON.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON. See /docs/errors#unsupported_media_type. */
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
                     *       "detail": "The body is not declared as JSON.",
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
                /** @description member: a console member's standing grant, from which their sessions and the API keys they create derive */
                kind?: "api_key" | "delegation_token" | "session" | "member";
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON. See /docs/errors#unsupported_media_type. */
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
                     *       "detail": "The body is not declared as JSON.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON. See /docs/errors#unsupported_media_type. */
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
                     *       "detail": "The body is not declared as JSON.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON. See /docs/errors#unsupported_media_type. */
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
                     *       "detail": "The body is not declared as JSON.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `unsupported_media_type` (Unsupported media type): The body is not declared as JSON. See /docs/errors#unsupported_media_type. */
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
                     *       "detail": "The body is not declared as JSON.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
            /** @description `validation_failed` (Validation failed): The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent. See /docs/errors#validation_failed. */
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
                     *       "detail": "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD, CONFLICTING_FIELDS, MALFORMED_JSON, UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT. For enum, literal and format errors `received` shows (the start of) the value that was sent.",
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
        };
    };
}
