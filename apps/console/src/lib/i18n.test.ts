import { describe, expect, it } from 'vitest';
import { MESSAGES } from '@ukiyo/contract';
import { routes } from '@/app/routes.ts';
import en from '@/locales/en/translation.json';
import ja from '@/locales/ja/translation.json';
import { i18n, setLanguage, translateRef } from './i18n.ts';

describe('i18n', () => {
  it('has the same keys in both languages, none shadowing the contract', () => {
    expect(Object.keys(en).sort()).toEqual(Object.keys(ja).sort());
    for (const key of Object.keys(ja)) expect(Object.hasOwn(MESSAGES, key)).toBe(false);
  });

  it('has a title for every route', () => {
    for (const route of Object.values(routes) as { titleKey: string; liveTitleKey?: string }[]) {
      for (const key of [route.titleKey, route.liveTitleKey].filter((k) => k !== undefined)) {
        expect(Object.hasOwn(ja, key), key).toBe(true);
      }
    }
  });

  it('translates message references with their parameters, Japanese first', async () => {
    const t = i18n.getFixedT('ja');
    expect(translateRef(t, 'validation.maxLength|n=128')).toBe('128文字以下で入力してください');
    expect(translateRef(t, 'validation.between|min=0&max=2147483647')).toBe(
      '0以上2147483647以下の値を入力してください',
    );
    expect(translateRef(i18n.getFixedT('en'), 'validation.maxLength|n=128')).toBe(
      'input equals or less than 128 letters',
    );
    expect(translateRef(t, 'error.internal')).toBe('内部エラーが発生しました');
  });

  it('switches language, remembers it and marks the document', async () => {
    expect(i18n.language).toBe('ja');
    await setLanguage('en');
    expect(i18n.t('nav.logout')).toBe('Log out');
    expect(document.documentElement.lang).toBe('en');
    expect(window.localStorage.getItem('ukiyo.language')).toBe('en');
    await setLanguage('ja');
    expect(document.documentElement.lang).toBe('ja');
  });
});
