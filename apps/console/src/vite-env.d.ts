/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** The product's public web site, linked from the logged-out menu. */
  readonly VITE_SERVICE_SITE_URL?: string;
}

/** A language catalogue cut to the shell's texts in the build (apps/console/build/catalogue-shell.ts). */
declare module '*/translation.json?shell' {
  const texts: Record<string, string>;
  export default texts;
}
