import { beforeAll, describe, expect, it } from "vitest";
import { areaOperations, checkedCapabilities, offeredCapabilityAreas, registerContributions } from "@/server/areas";
import { database } from "@/server/db/client";
import { errorCodes, isErrorCode } from "@/server/errorCatalogue";
import { putPlatformEvent } from "@/server/events/platformEvents";
import {
  isReservedEventType,
  platformEventCatalogue,
  UndeclaredPlatformEventType,
} from "@/server/events/platformEventTypes";
import { registerOperations } from "@/server/http/operationRegistry";
import {
  capabilityAreaOf,
  capabilityGroups,
  isKnownCapability,
  offerCapabilityAreas,
} from "@/server/identity/capabilityCatalogue";
import { rootOrgDid } from "@/server/setup/bootstrap";
import { noteArea } from "../fixtures/areaFixture";
import { apiKey, call, useTestServer } from "./harness";

/**
 * A new area is its folder (issue 29, item 1): the fixture area in tests/fixtures/areaFixture/
 * declares an operation, a capability area, a platform event group and an error code there and
 * nowhere else. Composed with the real root as `composeServer` composes an area (its
 * contributions registered, its operations in the routing table, its capability area offered
 * once an operation checks it), it works end to end; before, the kernel knows none of it.
 */
const t = useTestServer();
const api = (method: string, path: string, token: string, body?: unknown) =>
  call(t.server.url, method, path, { token, body });

/** What `composeServer` (server/areas.ts) does with an entry of the root, for one more area. */
function composeFixture() {
  registerContributions([noteArea]);
  registerOperations([...areaOperations, ...noteArea.operations]);
  offerCapabilityAreas(
    new Set([
      ...offeredCapabilityAreas,
      ...checkedCapabilities([noteArea])
        .map(capabilityAreaOf)
        .filter((a): a is string => a !== undefined),
    ]),
  );
}

describe("before the fixture area is composed, the kernel knows none of it (fail closed)", () => {
  it("its capability, event type, error code and route are unknown", async () => {
    expect(isKnownCapability("svc_api:notes:write")).toBe(false);
    expect(isReservedEventType("note.written")).toBe(false);
    expect(isErrorCode("note_refused")).toBe(false);
    const res = await api("POST", "/v1/fixture-notes", t.root.token, { text: "hello" });
    expect(res.status).toBe(404);
    const db = await database();
    const org = (await rootOrgDid(db))!;
    await expect(
      db.writeTx((tx) => putPlatformEvent(tx, db.engine, org, { type: "note.written", payload: {} })),
    ).rejects.toBeInstanceOf(UndeclaredPlatformEventType);
  });
});

describe("the fixture area composed with the real root", () => {
  beforeAll(composeFixture);

  it("its capability is offered: in the key picker, and a delegation may carry it", async () => {
    expect(isKnownCapability("svc_api:notes:write")).toBe(true);
    expect(isKnownCapability("svc_api:notes:*")).toBe(true);
    const notes = capabilityGroups().find((g) => g.area === "notes");
    expect(notes?.capabilities.map((c) => c.capability)).toEqual(["svc_api:notes:read", "svc_api:notes:write"]);
    const writer = await apiKey(["svc_api:notes:write"]);
    expect(writer.token).toBeTruthy();
  });

  it("its operation answers through the gate, raising its declared platform event", async () => {
    const writer = await apiKey(["svc_api:notes:write"]);
    const res = await api("POST", "/v1/fixture-notes", writer.token, { text: "hello" });
    expect(res.status).toBe(201);
    expect(res.body.event_id).toMatch(/^evt_/);
    const event = await api("GET", `/v1/events/${res.body.event_id}`, t.root.token);
    expect(event.status).toBe(200);
    expect(event.body.type).toBe("note.written");
    // Another capability does not reach it.
    const other = await apiKey(["svc_api:events:read"]);
    expect((await api("POST", "/v1/fixture-notes", other.token, { text: "x" })).status).toBe(403);
  });

  it("its event type is reserved, and read with the capability it declared", async () => {
    expect(isReservedEventType("note.written")).toBe(true);
    expect(platformEventCatalogue().find((e) => e.pattern === "note.*")?.readCapability).toBe("svc_api:notes:read");
    const ingest = await api("POST", "/v1/events/ingest", t.root.token, { type: "note.written", payload: {} });
    expect(ingest.status).toBe(400);
    expect(JSON.stringify(ingest.body)).toContain("RESERVED_EVENT_TYPE");
    const events = await apiKey(["svc_api:events:write", "svc_api:events:read"]);
    const hook = await api("POST", "/v1/webhooks", events.token, {
      target_url: "https://hooks.example.com/notes",
      event_types: ["note.*"],
    });
    expect(hook.status).toBe(403);
    expect(hook.body.missing_capability).toBe("svc_api:notes:read");
  });

  it("its error code is in the catalogue and answers as it declared", async () => {
    expect(errorCodes()).toContain("note_refused");
    const res = await api("POST", "/v1/fixture-notes", t.root.token, { text: "refuse" });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ status: 409, title: "Note refused", detail: "This note is refused." });
    expect(res.body.type).toMatch(/\/docs\/errors#note_refused$/);
  });

  it("an event type the area did not declare is still refused where it is raised, writing nothing", async () => {
    const db = await database();
    const before = await db.read.event.count();
    const org = (await rootOrgDid(db))!;
    await expect(
      db.writeTx((tx) => putPlatformEvent(tx, db.engine, org, { type: "note.deleted", payload: {} })),
    ).rejects.toBeInstanceOf(UndeclaredPlatformEventType);
    expect(await db.read.event.count()).toBe(before);
  });
});
