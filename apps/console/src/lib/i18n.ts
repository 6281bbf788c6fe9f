import i18next, { type TFunction } from 'i18next';
import { initReactI18next } from 'react-i18next';
import { messagesIn, parseMessageRef } from '@ukiyo/contract';
import jaShell from '@/locales/ja/translation.json?shell';

/** Japanese first: the default and the fallback (console-spec section 1). */
export const LANGUAGES = ['ja', 'en'] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = 'ja';

const STORAGE_KEY = 'ukiyo.language';

function isLanguage(value: unknown): value is Language {
  return LANGUAGES.includes(value as Language);
}

function storedLanguage(): Language {
  try {
    const value = window.localStorage.getItem(STORAGE_KEY);
    return isLanguage(value) ? value : DEFAULT_LANGUAGE;
  } catch {
    // Storage can be disabled (privacy settings); the default language still works.
    return DEFAULT_LANGUAGE;
  }
}

/**
 * The console's texts load on demand, so the entry chunk stays small as screens add texts: it
 * holds only the shell's Japanese texts (what shows before the first route: `?shell`, cut from
 * the one catalogue file in the build by apps/console/build/catalogue-shell.ts). The root
 * loader fetches the whole catalogue of the current language (`textsReady`) beside the page's
 * own chunk. The contract's messages are in the entry anyway, in every language.
 */
const LOADERS: Record<Language, () => Promise<Record<string, string>>> = {
  ja: () => import('@/locales/ja/translation.json').then((module) => module.default),
  en: () => import('@/locales/en/translation.json').then((module) => module.default),
};
const loading = new Map<Language, Promise<void>>();

export const i18n = i18next.createInstance();

void i18n.use(initReactI18next).init({
  // The console's own texts, plus the contract's catalogue shared with the server (validation,
  // errors, limits), so a message reference from `invalids` translates like a local key.
  resources: {
    ja: { translation: { ...messagesIn('ja'), ...jaShell } },
    en: { translation: messagesIn('en') },
  },
  partialBundledLanguages: true,
  lng: DEFAULT_LANGUAGE,
  fallbackLng: DEFAULT_LANGUAGE,
  supportedLngs: [...LANGUAGES],
  // Keys are flat strings with dots ('error.internal'), not nested paths.
  keySeparator: false,
  nsSeparator: false,
  interpolation: { escapeValue: false },
  initAsync: false,
});

document.documentElement.lang = i18n.language;
i18n.on('languageChanged', (language) => {
  document.documentElement.lang = language;
});

/** Loads a language's whole catalogue once; a failed load is tried again by the next call. */
function loadLanguage(language: Language): Promise<void> {
  let promise = loading.get(language);
  if (!promise) {
    promise = LOADERS[language]().then((texts) => {
      i18n.addResourceBundle(language, 'translation', texts, true, true);
    });
    promise.catch(() => loading.delete(language));
    loading.set(language, promise);
  }
  return promise;
}

/** Every text of the current language: the root loader waits for it before any route renders. */
export function textsReady(): Promise<void> {
  return loadLanguage(currentLanguage());
}

/**
 * The remembered language, ready: main.tsx waits for it before the first render so an English
 * reader never sees Japanese flash by. A catalogue that fails to load leaves the default.
 */
export const languageReady: Promise<void> = (async () => {
  const language = storedLanguage();
  if (language === DEFAULT_LANGUAGE) return;
  try {
    await loadLanguage(language);
    await i18n.changeLanguage(language);
  } catch {
    // Japanese stays: the console still works, and the switch can be tried again.
  }
})();

export function currentLanguage(): Language {
  return isLanguage(i18n.language) ? i18n.language : DEFAULT_LANGUAGE;
}

export async function setLanguage(language: Language): Promise<void> {
  try {
    window.localStorage.setItem(STORAGE_KEY, language);
  } catch {
    // Not persisted, but the switch itself still applies to this page.
  }
  await loadLanguage(language);
  await i18n.changeLanguage(language);
}

/** A message reference from the contract (`validation.maxLength|n=128`) in the current language. */
export function translateRef(t: TFunction, ref: string): string {
  const { key, params } = parseMessageRef(ref);
  return t(key, params);
}
