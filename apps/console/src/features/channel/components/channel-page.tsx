import { useState } from 'react';
import Badge from 'react-bootstrap/Badge';
import Button from 'react-bootstrap/Button';
import Card from 'react-bootstrap/Card';
import Form from 'react-bootstrap/Form';
import { useFieldArray, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { AUDIO_BITRATES, invalidsOf, MAX_RENDITIONS, operations, VIDEO_CODECS } from '@ukiyo/contract';
import { ConfirmModal } from '@/components/confirm-modal.tsx';
import { useConfirmation } from '@/lib/use-confirmation.ts';
import { CopyButton } from '@/components/copy-button.tsx';
import { DataTableCard } from '@/components/data-table-card.tsx';
import { FieldError } from '@/components/field-error.tsx';
import { FormField } from '@/components/form-field.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { FieldTable } from '@/components/field-table.tsx';
import { SubmitButton } from '@/components/submit-button.tsx';
import {
  applyInvalids,
  classifyApiError,
  useApiErrorHandler,
  useReportQueryError,
} from '@/lib/api-errors.ts';
import { flash } from '@/lib/flash.ts';
import { formatDateTime } from '@/lib/format.ts';
import { useAddChannel, useChannels, useDeleteChannel } from '@/features/channel/api/channel-api.ts';
import {
  DEFAULT_LADDER,
  renditionsOf,
  rungFieldOf,
  rungSummary,
  type RungForm,
} from '@/features/channel/ladder.ts';
import { ChannelLive, OnAirBadge } from './channel-live.tsx';
import type { ChannelView } from './channel-types.ts';
import { LiveOrganizationOnly } from './live-organization-only.tsx';

interface ChannelForm {
  hls: RungForm[];
  encryptKeyUri: string;
  authWebhookUrl: string;
  eventWebhookUrl: string;
}

const RUNG_FIELDS = ['width', 'height', 'fps', 'kbps'] as const;
/** A rung's settings picked from a list: the video codec and the audio bitrate. */
const RUNG_CHOICES = [
  { field: 'codec', values: VIDEO_CODECS, label: (codec: string | number) => String(codec) },
  {
    field: 'audioBps',
    values: AUDIO_BITRATES,
    label: (bps: string | number) => `${Number(bps) / 1000} kbps`,
  },
] as const;

/** The channel's URLs: where players get the HLS key, and the webhooks that authorise and hear it. */
const URL_FIELDS: {
  name: 'encryptKeyUri' | 'authWebhookUrl' | 'eventWebhookUrl';
  id: string;
  labelKey: string;
  helpKey?: string;
  placeholder: string;
}[] = [
  {
    name: 'encryptKeyUri',
    id: 'channel-encrypt-key-uri',
    labelKey: 'channel.encryptKeyUri',
    helpKey: 'channel.encryptKeyUriHelp',
    placeholder: 'https://example.com/hls-key',
  },
  {
    name: 'authWebhookUrl',
    id: 'channel-auth-webhook',
    labelKey: 'channel.authWebhookUrl',
    placeholder: 'https://example.com/auth',
  },
  {
    name: 'eventWebhookUrl',
    id: 'channel-event-webhook',
    labelKey: 'channel.eventWebhookUrl',
    placeholder: 'https://example.com/events',
  },
];

function CreateChannel() {
  const { t } = useTranslation();
  const handleError = useApiErrorHandler();
  const add = useAddChannel();
  const form = useForm<ChannelForm>({
    defaultValues: { hls: DEFAULT_LADDER, encryptKeyUri: '', authWebhookUrl: '', eventWebhookUrl: '' },
  });
  const {
    register,
    control,
    handleSubmit,
    setError,
    reset,
    formState: { errors },
  } = form;
  const rungs = useFieldArray({ control, name: 'hls' });

  const showInvalids = (invalids: Record<string, string[]>) => {
    const mapped: Record<string, string[]> = {};
    for (const [field, messages] of Object.entries(invalids)) mapped[rungFieldOf(field)] = messages;
    applyInvalids(setError, mapped);
    flash.now({ variant: 'danger', key: 'error.invalidInputs', action: 'channel' });
  };

  const submit = handleSubmit(async ({ hls, ...rest }) => {
    const input = { hls: renditionsOf(hls), ...rest };
    const parsed = operations['channel.add'].input.safeParse(input);
    if (!parsed.success) return showInvalids(invalidsOf(parsed.error));
    try {
      const { channel } = await add.mutateAsync(input);
      flash.now({
        variant: 'success',
        key: 'channel.created',
        params: { id: channel.id },
        action: 'channel',
      });
      reset();
    } catch (error) {
      const failure = classifyApiError(error);
      if (failure.kind === 'validation') showInvalids(failure.invalids);
      else handleError(error, { action: 'channel' });
    }
  });

  return (
    <Card className="shadow-sm border-0 mb-4">
      <Card.Body className="p-4">
        <h2 className="h5">{t('channel.createTitle')}</h2>
        <p className="small text-body-secondary">{t('channel.createLead')}</p>
        <Form noValidate onSubmit={(event) => void submit(event)} data-testid="channel-form">
          <FieldTable
            testId="channel-ladder"
            columns={[
              t('channel.width'),
              t('channel.height'),
              t('channel.fps'),
              t('channel.kbps'),
              t('channel.codec'),
              t('channel.audioBps'),
              t('channel.segmentSeconds'),
            ]}
          >
            {rungs.fields.map((rung, index) => {
              const error = errors.hls?.[index];
              return (
                <tr key={rung.id} data-testid="channel-rung">
                  {RUNG_FIELDS.map((field) => (
                    <td key={field}>
                      <Form.Control
                        size="sm"
                        inputMode="numeric"
                        aria-label={t(`channel.${field}`)}
                        isInvalid={!!error?.[field]}
                        {...register(`hls.${index}.${field}`)}
                        data-testid={`channel-rung-${field}`}
                      />
                      <FieldError error={error?.[field]} />
                    </td>
                  ))}
                  {RUNG_CHOICES.map(({ field, values, label }) => (
                    <td key={field}>
                      <Form.Select
                        size="sm"
                        aria-label={t(`channel.${field}`)}
                        {...register(`hls.${index}.${field}`)}
                      >
                        {values.map((value) => (
                          <option key={value} value={value}>
                            {label(value)}
                          </option>
                        ))}
                      </Form.Select>
                    </td>
                  ))}
                  <td>
                    <Form.Control
                      size="sm"
                      inputMode="numeric"
                      aria-label={t('channel.segmentSeconds')}
                      isInvalid={!!error?.durationSeconds}
                      {...register(`hls.${index}.durationSeconds`)}
                    />
                    <FieldError error={error?.durationSeconds} />
                  </td>
                  <td>
                    <Button
                      variant="outline-danger"
                      size="sm"
                      className="text-nowrap"
                      disabled={rungs.fields.length === 1}
                      onClick={() => rungs.remove(index)}
                    >
                      {t('channel.removeRung')}
                    </Button>
                  </td>
                </tr>
              );
            })}
          </FieldTable>
          <FieldError error={errors.hls?.root ?? errors.hls} block />
          <Button
            variant="outline-secondary"
            size="sm"
            className="mb-3"
            disabled={rungs.fields.length >= MAX_RENDITIONS}
            onClick={() => rungs.append({ ...DEFAULT_LADDER[1]! })}
            data-testid="channel-add-rung"
          >
            {t('channel.addRung')}
          </Button>
          {URL_FIELDS.map(({ name, id, labelKey, helpKey, placeholder }) => (
            <FormField
              key={name}
              form={form}
              name={name}
              id={id}
              label={t(labelKey)}
              placeholder={placeholder}
              help={helpKey && t(helpKey)}
            />
          ))}
          <SubmitButton busy={add.isPending} testId="channel-submit">
            {t('channel.create')}
          </SubmitButton>
        </Form>
      </Card.Body>
    </Card>
  );
}

function StatusBadge({ channel }: { channel: ChannelView }) {
  const { t } = useTranslation();
  return (
    <Badge
      bg={channel.status === 'deleting' ? 'secondary' : 'success'}
      data-testid="channel-status"
      data-status={channel.status}
    >
      {t(`channel.status.${channel.status}`)}
    </Badge>
  );
}

/** /channel: the live organization's channels, a ladder editor to create one, and its live view. */
export function ChannelPage() {
  const { t } = useTranslation();
  return (
    <LiveOrganizationOnly title={t('title.channel')}>
      <Channels />
    </LiveOrganizationOnly>
  );
}

function Channels() {
  const { t, i18n } = useTranslation();
  const handleError = useApiErrorHandler();
  const channels = useChannels();
  const remove = useDeleteChannel();
  useReportQueryError(channels.error);
  const deleting = useConfirmation<ChannelView>();
  const [openId, setOpenId] = useState<string | null>(null);
  const list = channels.data?.channels ?? [];
  const open = list.find((channel) => channel.id === openId) ?? null;

  const confirmDelete = () =>
    deleting.confirm(async ({ id }) => {
      try {
        await remove.mutateAsync({ id });
        flash.now({ variant: 'success', key: 'channel.deleted', params: { id }, action: 'channel' });
        if (openId === id) setOpenId(null);
      } catch (error) {
        handleError(error, { action: 'channel' });
      }
    });

  return (
    <>
      <PageHeader title={t('title.channel')} lead={t('channel.lead')} />
      <CreateChannel />
      <DataTableCard
        query={channels}
        rowCount={list.length}
        testId="channel-table"
        empty={t('channel.empty')}
        emptyTestId="channel-empty"
        columns={[
          t('channel.id'),
          t('channel.createdAt'),
          { label: t('channel.connections'), className: 'text-end' },
          t('channel.hlsUrl'),
          t('channel.statusLabel'),
          t('channel.settings'),
        ]}
        actions
      >
        {list.map((channel) => {
          const hls = (channel.settings.hls as { video?: Record<string, number> }[] | undefined) ?? [];
          return (
            <tr key={channel.id} data-testid="channel-row" data-channel-id={channel.id}>
              <td>
                <code data-testid="channel-id">{channel.id}</code>
              </td>
              <td className="small text-nowrap">{formatDateTime(channel.createdAt, i18n.language)}</td>
              <td className="text-end" data-testid="channel-connections">
                {channel.activeConnectionCount}
              </td>
              <td className="small text-break">
                {channel.hlsUrl ? (
                  <span className="d-flex gap-2 align-items-start">
                    <code data-testid="channel-hls-url">{channel.hlsUrl}</code>
                    <span className="text-nowrap">
                      <CopyButton text={channel.hlsUrl} testId="channel-hls-copy" />
                    </span>
                  </span>
                ) : (
                  <span className="text-body-secondary">{t('channel.noPlaylist')}</span>
                )}
              </td>
              <td>
                <span className="d-inline-flex flex-wrap gap-1">
                  <StatusBadge channel={channel} />
                  {channel.onAir && <OnAirBadge onAir />}
                </span>
              </td>
              <td className="small">
                {hls.map((rendition, index) => (
                  <div key={index}>{rungSummary(rendition)}</div>
                ))}
                {Boolean(channel.settings.encryptKeyUri) && <Badge bg="info">{t('channel.encrypted')}</Badge>}
              </td>
              <td className="text-end text-nowrap">
                {channel.status === 'normal' && (
                  <>
                    <Button
                      variant={openId === channel.id ? 'primary' : 'outline-primary'}
                      size="sm"
                      onClick={() => setOpenId(openId === channel.id ? null : channel.id)}
                      data-testid="channel-open"
                    >
                      {t('channel.open')}
                    </Button>
                    <Button
                      variant="outline-danger"
                      size="sm"
                      className="ms-2"
                      onClick={() => deleting.ask(channel)}
                      data-testid="channel-delete"
                    >
                      {t('common.delete')}
                    </Button>
                  </>
                )}
              </td>
            </tr>
          );
        })}
      </DataTableCard>
      {open && <ChannelLive key={open.id} channel={open} />}
      <ConfirmModal
        {...deleting.modal}
        title={t('channel.deleteTitle')}
        confirmLabel={t('common.delete')}
        busy={remove.isPending}
        testId="channel-delete"
        onConfirm={() => void confirmDelete()}
      >
        <p>{t('channel.deleteConfirm')}</p>
        {deleting.target && <code>{deleting.target.id}</code>}
      </ConfirmModal>
    </>
  );
}
