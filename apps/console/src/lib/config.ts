/**
 * Build-time settings (Vite reads VITE_* from the environment or an .env file when building).
 * The service site is the product's public web site, outside the console.
 */
export const SERVICE_SITE_URL: string = import.meta.env.VITE_SERVICE_SITE_URL ?? 'https://www.sakura.ad.jp/';
