import NavDropdown from 'react-bootstrap/NavDropdown';
import { useTranslation } from 'react-i18next';
import { LANGUAGES, currentLanguage, setLanguage } from '@/lib/i18n.ts';
import { Icon } from './icons.tsx';

/** Each language is named in itself, so it can be found whatever is shown now. */
const NAMES = { ja: '日本語', en: 'English' } as const;

export function LanguageSwitch() {
  // Subscribing re-renders the switch when the language changes.
  const { t } = useTranslation();
  const language = currentLanguage();
  return (
    <NavDropdown
      id="language-switch"
      data-testid="language-switch"
      aria-label={t('nav.language')}
      title={
        <>
          <Icon name="globe" className="me-1" />
          {NAMES[language]}
        </>
      }
      align="end"
    >
      {LANGUAGES.map((option) => (
        <NavDropdown.Item
          key={option}
          as="button"
          lang={option}
          active={option === language}
          data-testid={`language-${option}`}
          onClick={() => void setLanguage(option)}
        >
          {NAMES[option]}
        </NavDropdown.Item>
      ))}
    </NavDropdown>
  );
}
