import Button from 'react-bootstrap/Button';
import { useTranslation } from 'react-i18next';
import { flash } from '@/lib/flash.ts';

/** The Clipboard API needs a secure context; plain-HTTP consoles fall back to a selection copy. */
export async function writeClipboard(text: string): Promise<void> {
  if (window.isSecureContext && navigator.clipboard) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  try {
    if (!document.execCommand('copy')) throw new Error('copy refused');
  } finally {
    area.remove();
  }
}

export function CopyButton({ text, testId, label }: { text: string; testId: string; label?: string }) {
  const { t } = useTranslation();
  const copy = async () => {
    try {
      await writeClipboard(text);
      flash.now({ variant: 'success', key: 'common.copied', action: 'copy' });
    } catch {
      flash.now({ variant: 'warning', key: 'common.copyFailed', action: 'copy' });
    }
  };
  return (
    <Button variant="outline-secondary" size="sm" onClick={() => void copy()} data-testid={testId}>
      {label ?? t('common.copy')}
    </Button>
  );
}
