/** The reserved HTTP origin host the edge answers from its bundled sample images. */
export const SAMPLE_ORIGIN_HOST = 'samples.ukiyo.invalid';

/** The bundled sample images (apps/edge/samples), as paths inside such an origin. */
export const SAMPLE_PATHS = ['/fuji.jpg', '/koi.png', '/seigaiha.png'] as const;

/** The organization that owns the guest preview's origin; listed after the real ones. */
export const SAMPLES_SERVICE_CODE = 'ukiyo-samples';
