import { useTranslation } from 'react-i18next';
import { PageHeader } from '@/components/page-header.tsx';
import { useAddOrigin, useUpdateOrigin } from '@/features/origin/api/origin-api.ts';
import { formValuesOf, originInputOf } from '@/features/origin/origin-form.ts';
import { OriginCheck } from './origin-check.tsx';
import { OriginForm } from './origin-form.tsx';
import { OriginLoader, useOriginParam } from './origin-loader.tsx';
import { OriginStatusBadge } from './origin-status.tsx';
import { useOriginSave } from './use-origin-save.ts';

function useCreate() {
  const add = useAddOrigin();
  return useOriginSave((values) => add.mutateAsync({ origin: originInputOf(values, -1) }), {
    saved: 'origin.created',
    failed: 'origin.createFailed',
  });
}

export function OriginCreatePage() {
  const { t } = useTranslation();
  const save = useCreate();
  return (
    <>
      <PageHeader title={t('title.originCreate')} lead={t('origin.createLead')} />
      <OriginForm
        initial={formValuesOf(null, 'create')}
        previous={null}
        submitLabel={t('origin.createSubmit')}
        onSave={save}
      />
    </>
  );
}

/** /origin/copy/{copyId}: a new origin with another one's settings. */
export function OriginCopyPage() {
  const { t } = useTranslation();
  const copyID = useOriginParam();
  const save = useCreate();
  return (
    <>
      <PageHeader title={t('title.originCopy')} lead={t('origin.copyLead')} />
      <OriginLoader originID={copyID}>
        {(origin) => (
          <OriginForm
            initial={formValuesOf(origin, 'copy')}
            previous={null}
            submitLabel={t('origin.createSubmit')}
            onSave={save}
          />
        )}
      </OriginLoader>
    </>
  );
}

export function OriginUpdatePage() {
  const { t } = useTranslation();
  const originID = useOriginParam();
  const update = useUpdateOrigin();
  const save = useOriginSave((values) => update.mutateAsync({ origin: originInputOf(values, originID) }), {
    saved: 'origin.updated',
    failed: 'origin.updateFailed',
  });
  return (
    <>
      <PageHeader title={t('title.originUpdate')} />
      <OriginLoader originID={originID}>
        {(origin) => (
          <>
            <div className="mb-3" data-testid="origin-update-status">
              <span className="small text-body-secondary me-2">{t('origin.statusLabel')}</span>
              <OriginStatusBadge origin={origin} />
            </div>
            <OriginCheck originID={origin.originID} name={origin.name} auto={false} />
            <OriginForm
              key={origin.originID}
              initial={formValuesOf(origin, 'update')}
              previous={origin}
              submitLabel={t('common.save')}
              onSave={save}
            />
          </>
        )}
      </OriginLoader>
    </>
  );
}
