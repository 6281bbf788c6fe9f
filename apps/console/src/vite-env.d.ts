/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** The product's public web site, linked from the logged-out menu. */
  readonly VITE_SERVICE_SITE_URL?: string;
}
