import type { ReactNode } from 'react';
import Button from 'react-bootstrap/Button';
import Modal from 'react-bootstrap/Modal';
import Spinner from 'react-bootstrap/Spinner';
import { useTranslation } from 'react-i18next';

/**
 * A yes/no question before something that cannot be undone. `testId` names the dialog and its
 * buttons (`{testId}-modal`, `{testId}-confirm`, `{testId}-cancel`) for the browser tests.
 */
export function ConfirmModal({
  show,
  title,
  children,
  confirmLabel,
  variant = 'danger',
  busy = false,
  testId,
  onConfirm,
  onCancel,
}: {
  show: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  variant?: 'danger' | 'primary';
  busy?: boolean;
  testId: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const { t } = useTranslation();
  return (
    <Modal show={show} onHide={onCancel} centered data-testid={`${testId}-modal`}>
      <Modal.Header closeButton closeLabel={t('common.close')}>
        <Modal.Title as="h2" className="h5">
          {title}
        </Modal.Title>
      </Modal.Header>
      <Modal.Body>{children}</Modal.Body>
      <Modal.Footer>
        <Button variant="outline-secondary" onClick={onCancel} data-testid={`${testId}-cancel`}>
          {t('common.cancel')}
        </Button>
        <Button variant={variant} onClick={onConfirm} disabled={busy} data-testid={`${testId}-confirm`}>
          {busy && <Spinner size="sm" className="me-2" aria-hidden="true" />}
          {confirmLabel}
        </Button>
      </Modal.Footer>
    </Modal>
  );
}
