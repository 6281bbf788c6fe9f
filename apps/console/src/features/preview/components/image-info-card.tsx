import { decode } from 'blurhash';
import { useEffect, useRef } from 'react';
import Alert from 'react-bootstrap/Alert';
import Card from 'react-bootstrap/Card';
import Col from 'react-bootstrap/Col';
import Row from 'react-bootstrap/Row';
import Spinner from 'react-bootstrap/Spinner';
import { useTranslation } from 'react-i18next';
import { formatCount } from '@/lib/usage-format.ts';
import type { ImageFacts, InfoState } from '@/features/preview/image-info.ts';

/** BlurHash has no detail to lose: decoded this small and stretched by CSS. */
const PLACEHOLDER_SIDE = 32;

/** The placeholder a page would draw before the image arrives, decoded from the hash. */
function BlurhashCanvas({ hash, width, height }: { hash: string; width: number; height: number }) {
  const { t } = useTranslation();
  const ref = useRef<HTMLCanvasElement>(null);
  const scale = PLACEHOLDER_SIDE / Math.max(width, height, 1);
  const size = {
    width: Math.max(1, Math.round(width * scale)),
    height: Math.max(1, Math.round(height * scale)),
  };
  useEffect(() => {
    const context = ref.current?.getContext('2d');
    if (!context) return;
    const image = context.createImageData(size.width, size.height);
    image.data.set(decode(hash, size.width, size.height));
    context.putImageData(image, 0, 0);
  }, [hash, size.width, size.height]);
  return (
    <canvas
      ref={ref}
      width={size.width}
      height={size.height}
      className="preview-blurhash"
      role="img"
      aria-label={t('preview.info.placeholder')}
      data-testid="preview-info-placeholder"
    />
  );
}

function FactList({ title, facts, testId }: { title: string; facts: ImageFacts; testId: string }) {
  const { t, i18n } = useTranslation();
  const rows: [string, string, string][] = [
    [
      'size',
      t('preview.dimensions', { width: facts.width, height: facts.height }),
      `${facts.width}x${facts.height}`,
    ],
    ['format', facts.format.toUpperCase(), facts.format],
    ['bytes', t('preview.bytes', { value: formatCount(facts.bytes, i18n.language) }), String(facts.bytes)],
    ['alpha', t(facts.hasAlpha ? 'preview.info.yes' : 'preview.info.no'), String(facts.hasAlpha)],
    ['frames', formatCount(facts.frames, i18n.language), String(facts.frames)],
    ['orientation', String(facts.orientation), String(facts.orientation)],
  ];
  return (
    <>
      <h3 className="h6">{title}</h3>
      <dl className="small mb-0" data-testid={testId}>
        {rows.map(([key, text, value]) => (
          <div className="d-flex gap-2" key={key}>
            <dt className="fw-normal text-body-secondary preview-info-term">{t(`preview.info.${key}`)}</dt>
            <dd className="mb-1" data-testid={`${testId}-${key}`} data-value={value}>
              {text}
            </dd>
          </div>
        ))}
      </dl>
    </>
  );
}

/**
 * The edge's `f=json` answer for the delivery URL: the variant and the origin's file side by
 * side, the dominant colour and the BlurHash as the placeholder it decodes to.
 */
export function ImageInfoCard({ url, info }: { url: string; info: InfoState }) {
  const { t, i18n } = useTranslation();
  return (
    <Card className="shadow-sm border-0 mb-4" data-testid="preview-info" data-state={info.state}>
      <Card.Header className="bg-body d-flex flex-wrap justify-content-between align-items-center gap-2">
        <span className="fw-semibold">{t('preview.info.title')}</span>
        <a href={url} target="_blank" rel="noreferrer" className="btn btn-sm btn-outline-secondary">
          {t('preview.info.open')}
        </a>
      </Card.Header>
      <Card.Body>
        {info.state === 'loading' && <Spinner animation="border" size="sm" variant="secondary" />}
        {info.state === 'failed' && (
          <Alert variant="warning" className="mb-0 small" data-testid="preview-info-error">
            {t('preview.info.unavailable')}
            {info.code && i18n.exists(`preview.edgeError.${info.code}`) && (
              <div className="mt-1">{t(`preview.edgeError.${info.code}`)}</div>
            )}
          </Alert>
        )}
        {info.state === 'loaded' && (
          <Row className="g-3">
            <Col sm={6} lg={4}>
              <FactList title={t('preview.converted')} facts={info.info} testId="preview-info-result" />
            </Col>
            <Col sm={6} lg={4}>
              <FactList
                title={t('preview.original')}
                facts={info.info.original}
                testId="preview-info-original"
              />
            </Col>
            <Col lg={4}>
              <h3 className="h6">{t('preview.info.dominantColor')}</h3>
              <p className="small d-flex align-items-center gap-2">
                <span
                  className="preview-swatch"
                  style={{ backgroundColor: info.info.dominantColor }}
                  aria-hidden="true"
                />
                <code data-testid="preview-info-dominant">{info.info.dominantColor}</code>
              </p>
              <h3 className="h6">{t('preview.info.blurhash')}</h3>
              <BlurhashCanvas hash={info.info.blurhash} width={info.info.width} height={info.info.height} />
              <code className="d-block small mt-1 preview-url" data-testid="preview-info-blurhash">
                {info.info.blurhash}
              </code>
            </Col>
          </Row>
        )}
      </Card.Body>
    </Card>
  );
}
