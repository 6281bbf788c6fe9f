import { useEffect, useRef, useState, type ReactNode } from 'react';
import Alert from 'react-bootstrap/Alert';
import Badge from 'react-bootstrap/Badge';
import Card from 'react-bootstrap/Card';
import Col from 'react-bootstrap/Col';
import Form from 'react-bootstrap/Form';
import Row from 'react-bootstrap/Row';
import Spinner from 'react-bootstrap/Spinner';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { CopyButton } from '@/components/copy-button.tsx';
import { FormField, SelectField } from '@/components/form-field.tsx';
import { SubmitButton } from '@/components/submit-button.tsx';
import { formatCount } from '@/lib/usage-format.ts';
import { useImageInfo } from '@/features/preview/image-info.ts';
import {
  COMPARED_FORMATS,
  deliveryPath,
  FORMATS,
  infoParameters,
  ORIGINAL_PARAMETERS,
  parameterString,
  savingPercent,
  type PreviewControls,
} from '@/features/preview/preview-params.ts';
import { ImageInfoCard } from './image-info-card.tsx';
import { PreviewMedia } from './preview-media.tsx';

/** An origin the tester can use: `key` identifies it to `resolveUrls`. */
export interface PreviewOrigin {
  key: string;
  label: string;
}

interface PreviewForm extends PreviewControls {
  originKey: string;
  path: string;
  compare: boolean;
}

interface Requested {
  originKey: string;
  original: string;
  converted: string;
  /** The `f=json` answer of `converted`. */
  info: string;
  compared: { format: string; url: string }[];
}

type Facts =
  | { state: 'loading' }
  /** `code`: the edge's Ukiyo-Error header, translated here; its English body is never shown. */
  | { state: 'failed'; status: number; code: string }
  | { state: 'loaded'; src: string; bytes: number; type: string; width: number; height: number };

/** Width and height of a video, read from its metadata by an element outside the page. */
function videoSize(src: string): Promise<{ width: number; height: number }> {
  return new Promise((resolve, reject) => {
    const video = document.createElement('video');
    video.muted = true;
    video.preload = 'metadata';
    video.onloadedmetadata = () => resolve({ width: video.videoWidth, height: video.videoHeight });
    video.onerror = () => reject(new Error('unreadable video'));
    video.src = src;
  });
}

async function imageSize(blob: Blob): Promise<{ width: number; height: number }> {
  const bitmap = await createImageBitmap(blob);
  const size = { width: bitmap.width, height: bitmap.height };
  bitmap.close();
  return size;
}

/**
 * Fetches an image the way a page would and measures it: bytes and type from the response,
 * dimensions from decoding it (an MP4 result from its metadata). The edge answers with CORS,
 * so its bytes are readable here. Panels are keyed by URL, so a new URL starts from 'loading'
 * in a new panel.
 */
function useImageFacts(url: string): Facts {
  const [facts, setFacts] = useState<Facts>({ state: 'loading' });
  useEffect(() => {
    const controller = new AbortController();
    let objectUrl: string | undefined;
    void (async () => {
      try {
        const response = await fetch(url, { signal: controller.signal });
        if (!response.ok) {
          setFacts({
            state: 'failed',
            status: response.status,
            code: response.headers.get('Ukiyo-Error') ?? '',
          });
          return;
        }
        const blob = await response.blob();
        objectUrl = URL.createObjectURL(blob);
        const size = blob.type.startsWith('video/') ? await videoSize(objectUrl) : await imageSize(blob);
        setFacts({ state: 'loaded', src: objectUrl, bytes: blob.size, type: blob.type, ...size });
      } catch {
        if (!controller.signal.aborted) setFacts({ state: 'failed', status: 0, code: '' });
      }
    })();
    return () => {
      controller.abort();
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [url]);
  return facts;
}

function ImagePanel({
  title,
  url,
  baseline,
  testId,
}: {
  title: ReactNode;
  url: string;
  /** The original's size, for the saving. */
  baseline?: number;
  testId: string;
}) {
  const { t, i18n } = useTranslation();
  const facts = useImageFacts(url);
  const saving = facts.state === 'loaded' && baseline ? savingPercent(baseline, facts.bytes) : null;
  return (
    <Card className="shadow-sm border-0 h-100" data-testid={testId} data-state={facts.state}>
      <Card.Header className="bg-body d-flex justify-content-between align-items-center">
        <span className="fw-semibold">{title}</span>
        {saving !== null && (
          <Badge
            bg={saving >= 0 ? 'success' : 'warning'}
            text={saving >= 0 ? undefined : 'dark'}
            data-testid="preview-saving"
          >
            {t(saving >= 0 ? 'preview.saving' : 'preview.larger', { percent: Math.abs(saving) })}
          </Badge>
        )}
      </Card.Header>
      <div className="preview-canvas">
        {facts.state === 'loading' && <Spinner animation="border" variant="secondary" />}
        {facts.state === 'loaded' && (
          <PreviewMedia src={facts.src} type={facts.type} alt={t('preview.imageAlt', { url })} />
        )}
        {facts.state === 'failed' && (
          <Alert variant="danger" className="m-3 small" data-testid="preview-error">
            {facts.status ? t('preview.refused', { status: facts.status }) : t('preview.unreachable')}
            {facts.code && i18n.exists(`preview.edgeError.${facts.code}`) && (
              <div className="mt-1" data-testid="preview-error-reason" data-code={facts.code}>
                {t(`preview.edgeError.${facts.code}`)}
              </div>
            )}
          </Alert>
        )}
      </div>
      {facts.state === 'loaded' && (
        <Card.Footer className="bg-body small d-flex flex-wrap gap-3">
          <span data-testid="preview-dimensions" data-width={facts.width} data-height={facts.height}>
            {t('preview.dimensions', { width: facts.width, height: facts.height })}
          </span>
          <span data-testid="preview-format">{facts.type.replace(/^(image|video)\//, '').toUpperCase()}</span>
          <span data-testid="preview-bytes" data-bytes={facts.bytes}>
            {t('preview.bytes', { value: formatCount(facts.bytes, i18n.language) })}
          </span>
        </Card.Footer>
      )}
    </Card>
  );
}

function Results({
  requested,
  actions,
}: {
  requested: Requested;
  actions?: (url: string, originKey: string) => ReactNode;
}) {
  const { t } = useTranslation();
  const info = useImageInfo(requested.info);
  // The origin's own byte count, as the edge read it: what the savings are measured against.
  const originalBytes = info.state === 'loaded' ? info.info.original.bytes : undefined;
  return (
    <>
      <Card className="shadow-sm border-0 mb-4">
        <Card.Body>
          <Form.Label htmlFor="preview-url">{t('preview.deliveryUrl')}</Form.Label>
          <div className="d-flex flex-wrap gap-2 align-items-start">
            <code id="preview-url" className="preview-url flex-grow-1" data-testid="preview-url">
              {requested.converted}
            </code>
            <CopyButton text={requested.converted} testId="preview-copy" />
            <a
              href={requested.converted}
              target="_blank"
              rel="noreferrer"
              className="btn btn-sm btn-outline-secondary"
              data-testid="preview-open"
            >
              {t('preview.open')}
            </a>
            {actions?.(requested.converted, requested.originKey)}
          </div>
        </Card.Body>
      </Card>
      <Row className="g-4 mb-4">
        <Col md={6}>
          <ImagePanel
            key={requested.original}
            title={t('preview.original')}
            url={requested.original}
            testId="preview-original"
          />
        </Col>
        <Col md={6}>
          <ImagePanel
            key={requested.converted}
            title={t('preview.converted')}
            url={requested.converted}
            baseline={originalBytes}
            testId="preview-converted"
          />
        </Col>
      </Row>
      <ImageInfoCard url={requested.info} info={info} />
      {requested.compared.length > 0 && (
        <>
          <h2 className="h5">{t('preview.compareTitle')}</h2>
          <Row className="g-4" data-testid="preview-compare">
            {requested.compared.map(({ format, url }) => (
              <Col md={4} key={format}>
                <ImagePanel
                  key={url}
                  title={format.toUpperCase()}
                  url={url}
                  baseline={originalBytes}
                  testId={`preview-compare-${format}`}
                />
              </Col>
            ))}
          </Row>
        </>
      )}
    </>
  );
}

/**
 * The preview tester of /preview and /preview-guest: pick an origin and an image, set the
 * parameters, and see the delivery URL with the original and the converted image side by side
 * (optionally the same parameters in JPEG, WebP and AVIF). `resolveUrls` turns paths after the
 * host into full URLs (signed when the origin signs).
 */
export function PreviewTester({
  origins,
  samplePaths,
  initialPath,
  resolveUrls,
  actions,
}: {
  origins: PreviewOrigin[];
  samplePaths?: readonly string[];
  initialPath: string;
  resolveUrls: (originKey: string, paths: string[]) => Promise<string[] | undefined>;
  /** Buttons beside the delivery URL. */
  actions?: (url: string, originKey: string) => ReactNode;
}) {
  const { t } = useTranslation();
  const [requested, setRequested] = useState<Requested | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useForm<PreviewForm>({
    defaultValues: {
      originKey: origins[0]?.key ?? '',
      path: initialPath,
      width: '600',
      height: '',
      mode: '',
      format: 'webp',
      quality: '',
      extra: '',
      compare: true,
    },
  });

  const { handleSubmit, setError } = form;
  const submit = handleSubmit(async ({ originKey, path, compare, ...controls }) => {
    if (!originKey) return setError('originKey', { message: 'cache.selectOrigin' });
    if (!path.trim()) return setError('path', { message: 'validation.required' });
    const parameters = parameterString(controls);
    const paths = [
      deliveryPath(ORIGINAL_PARAMETERS, path),
      deliveryPath(parameters, path),
      deliveryPath(infoParameters(parameters), path),
      ...(compare
        ? COMPARED_FORMATS.map((format) => deliveryPath(parameterString(controls, format), path))
        : []),
    ];
    setBusy(true);
    try {
      const urls = await resolveUrls(originKey, paths);
      if (!urls) return;
      const [original = '', converted = '', info = '', ...compared] = urls;
      setRequested({
        originKey,
        original,
        converted,
        info,
        compared: compared.map((url, index) => ({ format: COMPARED_FORMATS[index]!, url })),
      });
    } finally {
      setBusy(false);
    }
  });

  // Given an image, the first result shows without a click: the tester explains itself by example.
  const started = useRef(false);
  useEffect(() => {
    if (!started.current && initialPath && origins.length > 0) {
      started.current = true;
      void submit();
    }
  }, [initialPath, origins.length, submit]);

  return (
    <Row className="g-4">
      <Col lg={4}>
        <Card className="shadow-sm border-0">
          <Card.Body className="p-4">
            <Form noValidate onSubmit={(event) => void submit(event)} data-testid="preview-form">
              <SelectField
                form={form}
                name="originKey"
                id="preview-origin"
                label={t('preview.origin')}
                // A single origin is chosen already: there is nothing to choose between.
                choose={origins.length !== 1 ? t('cache.selectOrigin') : undefined}
                options={origins.map((origin) => ({ value: origin.key, label: origin.label }))}
                className="mb-3"
              />
              <FormField
                form={form}
                name="path"
                id="preview-path"
                label={t('preview.path')}
                list={samplePaths ? 'preview-samples' : undefined}
                placeholder="/photos/cat.jpg"
                help={samplePaths && t('preview.samplesHelp', { paths: samplePaths.join(', ') })}
              />
              {samplePaths && (
                <datalist id="preview-samples">
                  {samplePaths.map((path) => (
                    <option key={path} value={path} />
                  ))}
                </datalist>
              )}
              <Row className="g-2 mb-3">
                {(['width', 'height'] as const).map((side) => (
                  <Col xs={6} key={side}>
                    <FormField
                      form={form}
                      name={side}
                      id={`preview-${side}`}
                      label={t(`preview.${side}`)}
                      type="number"
                      min={1}
                      className=""
                    />
                  </Col>
                ))}
              </Row>
              <SelectField
                form={form}
                name="mode"
                id="preview-mode"
                label={t('preview.mode')}
                choose={t('preview.modeDefault')}
                options={(['0', '1', '2', '3'] as const).map((mode) => ({
                  value: mode,
                  label: t(`preview.mode${mode}`),
                }))}
                className="mb-3"
              />
              <Row className="g-2 mb-3">
                <Col xs={7}>
                  <SelectField
                    form={form}
                    name="format"
                    id="preview-format"
                    testId="preview-format-select"
                    label={t('preview.format')}
                    options={FORMATS.map((format) => ({
                      value: format,
                      label: format === '' ? t('preview.formatDefault') : format,
                    }))}
                  />
                </Col>
                <Col xs={5}>
                  <FormField
                    form={form}
                    name="quality"
                    id="preview-quality"
                    label={t('preview.quality')}
                    type="number"
                    min={0}
                    max={100}
                    placeholder="auto"
                    className=""
                  />
                </Col>
              </Row>
              <FormField
                form={form}
                name="extra"
                id="preview-extra"
                label={t('preview.extra')}
                controlClassName="font-monospace"
                placeholder="blur=5x2,grayscale=100"
                help={t('preview.extraHelp')}
              />
              <Form.Check
                type="switch"
                id="preview-compare-switch"
                className="mb-3"
                label={t('preview.compare')}
                {...form.register('compare')}
                data-testid="preview-compare-switch"
              />
              <SubmitButton busy={busy} testId="preview-submit" className="w-100">
                {t('preview.submit')}
              </SubmitButton>
            </Form>
          </Card.Body>
        </Card>
      </Col>
      <Col lg={8}>
        {requested ? (
          <Results
            key={requested.converted + requested.compared.length}
            requested={requested}
            actions={actions}
          />
        ) : (
          <Alert variant="secondary">{t('preview.empty')}</Alert>
        )}
      </Col>
    </Row>
  );
}
