import { hasPermission, Permission, SAMPLE_PATHS } from '@ukiyo/contract';
import { signPath } from '@ukiyo/imaging';
import { findOrigin } from '../db/repositories/origins.ts';
import { AppError } from '../http/app-error.ts';
import { guestOriginName } from '../services/bootstrap.ts';
import { deliveryUrlOf } from '../services/origins.ts';
import { openSecret } from './origins.ts';
import { authOf, organizationOf, type Handlers } from './context.ts';

export const previewHandlers: Handlers = {
  'preview.guest_origin': async (_input, { deps }) => {
    const name = guestOriginName(deps.config);
    return { name, edgeUrl: deliveryUrlOf(deps.config, name), samplePaths: [...SAMPLE_PATHS] };
  },

  /**
   * Signing happens here, so the secret's use stays on the server with the one implementation.
   * Every member may use the preview tester; only those who may see the secret (the origin
   * permission) get signed URLs, since a signed URL of any path is as good as the secret.
   */
  'preview.urls': async ({ originID, paths }, context) => {
    const { db, secrets, config } = context.deps;
    const auth = authOf(context);
    const origin = await findOrigin(db, auth.scope, organizationOf(context).id, originID);
    if (!origin) throw new AppError('origin not found', { params: { id: originID } });
    const maySign = origin.enable_signed_url && hasPermission(auth.user.permission, Permission.origin);
    const secret = maySign ? openSecret(secrets, origin.signing_secret_enc) : '';
    const base = deliveryUrlOf(config, origin.name);
    return { urls: paths.map((path) => base + (secret ? signPath(secret, path) : path)) };
  },
};
