// Prints the hub's OpenAPI document (what its GET /api/openapi.json serves) for the checked-in
// openapi/hub.json. `npm run openapi` writes both documents, the bridge's and this one.
import { hubOpenApi, serializeOpenApi } from '../src/hub/system/openapi.ts';

process.stdout.write(serializeOpenApi(await hubOpenApi()));
