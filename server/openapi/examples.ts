/**
 * Realistic values for the API reference's examples (`.meta({ example })` on the area schemas):
 * a real did:key with its JWK, ids in the service's own format (server/ids.ts), a checkpoint
 * signed the way the ledger signs one. Plain constants, so the area schemas stay pure zod; a test
 * parses every example with the schema it illustrates.
 */
export const EXAMPLE = {
  rootOrgDid: "did:svc:01m806mp6se5epkgsjernk0mc6",
  orgDid: "did:key:z6MkqMtj2BAwHhzFtD6J1hkpo4Bsrmi4fgBvfUESLu2XBi88",
  agentDid: "did:key:z6MkhvonDFJbx2ioHy4RjcTNMkZUii9tyFTAJmfQ46a689Cd",
  agentJwk: { kty: "OKP", crv: "Ed25519", x: "M6GgFRbFn_OaRMtg0wRJ3BuuhqDR3xQpqa0pu3XwB4o" },
  capabilities: ["svc_api:passports:read", "svc_api:agents:invoke"],
  delegationId: "dlg_01m806mp6swxz67skv14da0y48",
  parentDelegationId: "dlg_01m806mp6shvwnpbge1af5jqa1",
  revocationId: "rev_01m806mp6sa84gxr0fgfghhr9y",
  recordId: "prv_01m806mp6sfvrcy2y16xnb5cjk",
  requestId: "req_01m806mp6s05dka2k9fejrktqr",
  createdAt: "2026-11-21T09:30:00.000Z",
  expiresAt: "2026-11-22T09:30:00.000Z",
  token:
    "eyJhbGciOiJFZERTQSIsImtpZCI6IjJvWTVhIiwidHlwIjoiSldUIn0.eyJzdWIiOiJkaWQ6a2V5Ono2TWtodm9uREZKYngyaW9IeTRSamNUTk1rWlVpaTl0eUZUQUptZlE0NmE2ODlDZCIsImRsZyI6ImRsZ18wMW04MDZtcDZzd3h6Njdza3YxNGRhMHk0OCIsImV4cCI6MTc5NTM0MTQwMH0.3q2Jm2l0c2lnbmF0dXJlX29mX3RoZV9zZXJ2aWNlX2tleV9vdmVyX2hlYWRlcl9hbmRfcGF5bG9hZA",
  leafHash: "ofzkNjhU/4iM/0uOeHXWAMJoI5BBKoz3mzfQsRFIsPo=",
  requestHash: "594e519ae499312b29433b7dd8a97ff068defcba9755b6d5d00e84c524d67b06",
  nodeHashes: [
    "gg1di692LsZtzVb+0Vx4vyeY1Pm9SS9FU+mbRoSGVJg=",
    "Z2uLuEznJn3VIN7KSBHI8QpT5jY1LwaYf0L+QlrO3YA=",
    "BICpPS6bCUuJ4I4Bl2CJrBgZOvgCxmtjHMjS3BuujIg=",
  ],
  verifierKey: "svc.example.com/ledger+6f90b48b+Adwpuep34hsM17YKkkqkGyjW1dBN9qVIG8NVVaTHEPzy",
  checkpoint:
    "svc.example.com/ledger\n1042\nLXEWQrcmsEQBYnyp+6wy9chTD7GQPMTbAiWHF5IaSIE=\n\n— svc.example.com/ledger b5C0i9wDsj/MPThIiVEGEZnw+SUoPKY8CjCLOFC8cpEJqX2YkPtP66c6B19wZMUTsqOAQ/btdLeYLLaKTLoMugMnSg8=\n",
  nextCursor:
    "WyIyMDI2LTExLTIxVDA5OjMwOjAwLjAwMFoiLCJkbGdfMDFtODA2bXA2c3d4ejY3c2t2MTRkYTB5NDgiXQ.Qm9Kd3J2c2dWbGxQZ0pHWk1D",
} as const;
