import { publicJwks } from "../keys/signingKeys";

/** GET /.well-known/jwks.json: the public halves of the service's signing keys. */
export async function jwksResponse(): Promise<Response> {
  return Response.json(await publicJwks(), { headers: { "Cache-Control": "public, max-age=300" } });
}
