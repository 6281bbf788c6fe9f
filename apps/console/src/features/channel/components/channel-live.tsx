import { useEffect, useRef, useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import Badge from 'react-bootstrap/Badge';
import Button from 'react-bootstrap/Button';
import Card from 'react-bootstrap/Card';
import Col from 'react-bootstrap/Col';
import Form from 'react-bootstrap/Form';
import Row from 'react-bootstrap/Row';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { paths } from '@/app/paths.ts';
import { CopyButton } from '@/components/copy-button.tsx';
import { ApiError } from '@/lib/api-client.ts';
import { useApiErrorHandler } from '@/lib/api-errors.ts';
import { publishCredential } from '@/features/channel/api/channel-api.ts';
import { HLS_PLAYER_CONFIG } from '@/features/channel/hls-player.ts';
import { WhipError, WhipPublisher, testPatternStream } from '@/features/channel/whip-publisher.ts';
import type { ChannelView } from './channel-types.ts';
import { LivePanel, PlayerVideo } from './live-panel.tsx';
import { WebRtcPlayer, whepUrlOf } from './webrtc-player.tsx';

type Source = 'pattern' | 'camera';

/** Whether the channel has a publisher now (channel.list's onAir, polled every few seconds). */
export function OnAirBadge({ onAir }: { onAir: boolean }) {
  const { t } = useTranslation();
  return (
    <Badge bg={onAir ? 'danger' : 'secondary'} data-testid="channel-on-air" data-on-air={onAir}>
      {t(onAir ? 'channel.onAir' : 'channel.offAir')}
    </Badge>
  );
}

interface EndpointItem {
  label: string;
  value: string;
  testId: string;
  /** Lets whoever holds it publish: hidden until asked for. */
  secret?: boolean;
}

/** One endpoint with its copy button; a secret one shows dots until its toggle is pressed. */
function Endpoint({ label, value, testId, secret = false }: EndpointItem) {
  const { t } = useTranslation();
  const [shown, setShown] = useState(!secret);
  return (
    <div className="mb-2">
      <dt className="small">{label}</dt>
      <dd className="d-flex gap-2 align-items-start mb-0">
        <code
          className="text-break"
          data-testid={testId}
          data-shown={shown}
          {...(shown ? {} : { 'aria-label': t('channel.secretHidden') })}
        >
          {shown ? value : '••••••••••••••••'}
        </code>
        <span className="d-flex gap-1 text-nowrap">
          {secret && (
            <Button
              variant="outline-secondary"
              size="sm"
              aria-pressed={shown}
              onClick={() => setShown(!shown)}
              data-testid={`${testId}-toggle`}
            >
              {t(shown ? 'channel.secretHide' : 'channel.secretShow')}
            </Button>
          )}
          <CopyButton text={value} testId={`${testId}-copy`} />
        </span>
      </dd>
    </div>
  );
}

/**
 * Where other software publishes to the channel: WHIP, or Sora signaling with the channel id;
 * encoders (OBS, ffmpeg) over RTMP, RTMPS or SRT with the channel's stream key.
 */
function PublishInfo({ channel }: { channel: ChannelView }) {
  const { t } = useTranslation();
  const { liveParams } = channel;
  const items: EndpointItem[] = [
    { label: t('channel.whipUrl'), value: liveParams.whipUrl, testId: 'channel-whip-url' },
    { label: t('channel.soraUrl'), value: liveParams.soraUrl, testId: 'channel-sora-url' },
    { label: t('channel.id'), value: channel.id, testId: 'channel-info-id' },
  ];
  const encoderItems: EndpointItem[] = [
    { label: t('channel.rtmpUrl'), value: liveParams.rtmpUrl, testId: 'channel-rtmp-url' },
    ...(liveParams.rtmpsUrl
      ? [{ label: t('channel.rtmpsUrl'), value: liveParams.rtmpsUrl, testId: 'channel-rtmps-url' }]
      : []),
    {
      label: t('channel.streamKey'),
      value: liveParams.streamKey,
      testId: 'channel-stream-key',
      secret: true,
    },
    { label: t('channel.srtUrl'), value: liveParams.srtUrl, testId: 'channel-srt-url', secret: true },
  ];
  return (
    <Card className="shadow-sm border-0 mb-4" data-testid="channel-publish-info">
      <Card.Body>
        <div className="d-flex align-items-center gap-2 mb-2">
          <h3 className="h6 mb-0">{t('channel.publishInfoTitle')}</h3>
          <OnAirBadge onAir={channel.onAir} />
        </div>
        <p className="small text-body-secondary">
          {t('channel.publishInfoLead')} <Link to={paths.tokenNew()}>{t('nav.tokens')}</Link>
        </p>
        <dl className="mb-0">
          {items.map((item) => (
            <Endpoint key={item.testId} {...item} />
          ))}
        </dl>
        <h3 className="h6 mt-4">{t('channel.encoderTitle')}</h3>
        <p className="small text-body-secondary">{t('channel.encoderLead')}</p>
        <dl className="mb-2" data-testid="channel-encoder-info">
          {encoderItems.map((item) => (
            <Endpoint key={item.testId} {...item} />
          ))}
        </dl>
        <p className="small text-body-secondary mb-0" data-testid="channel-obs-hint">
          {t('channel.obsHint')} <Link to={paths.docs('live/rtmp')}>{t('channel.encoderDocs')}</Link>
        </p>
      </Card.Body>
    </Card>
  );
}

/**
 * Publishes the camera or a test pattern to the channel over WHIP, from this browser, with
 * short-lived credentials of the signed-in session (channel.publish_credential): no API token.
 */
function Publisher({ channelId, whipUrl }: { channelId: string; whipUrl: string }) {
  const { t } = useTranslation();
  const handleError = useApiErrorHandler();
  const preview = useRef<HTMLVideoElement>(null);
  const session = useRef<{ publisher: WhipPublisher; stop: () => void } | null>(null);
  const [source, setSource] = useState<Source>('pattern');
  const [state, setState] = useState<'idle' | 'starting' | 'live'>('idle');
  const [problem, setProblem] = useState<string | null>(null);

  const stop = async () => {
    const current = session.current;
    session.current = null;
    current?.stop();
    await current?.publisher.stop();
    setState('idle');
  };
  // Leaving the page ends the publishing session.
  useEffect(
    () => () => {
      void stop();
    },
    [],
  );

  const start = async () => {
    setProblem(null);
    setState('starting');
    try {
      const media =
        source === 'camera'
          ? await navigator.mediaDevices.getUserMedia({ video: { width: 1280, height: 720 }, audio: true })
          : null;
      const captured = media
        ? { stream: media, stop: () => media.getTracks().forEach((track) => track.stop()) }
        : testPatternStream();
      if (preview.current) preview.current.srcObject = captured.stream;
      const publisher = new WhipPublisher(whipUrl, () => publishCredential(channelId));
      session.current = { publisher, stop: captured.stop };
      await publisher.start(captured.stream);
      setState('live');
    } catch (error) {
      await stop();
      if (error instanceof ApiError) handleError(error, { action: 'channel' });
      else
        setProblem(
          error instanceof WhipError
            ? t('channel.publishRefused', { status: error.status, reason: error.reason })
            : t('channel.publishFailed'),
        );
    }
  };

  return (
    <LivePanel title={t('channel.publishTitle')}>
      <p className="small text-body-secondary">{t('channel.publishLead')}</p>
      <div className="mb-2">
        {(['pattern', 'camera'] as const).map((value) => (
          <Form.Check
            key={value}
            inline
            type="radio"
            id={`channel-source-${value}`}
            label={t(`channel.source.${value}`)}
            checked={source === value}
            disabled={state !== 'idle'}
            onChange={() => setSource(value)}
          />
        ))}
      </div>
      <video ref={preview} className="channel-video mb-2" muted autoPlay playsInline />
      {problem && (
        <Alert variant="danger" className="small" data-testid="channel-publish-error">
          {problem}
        </Alert>
      )}
      {state === 'idle' ? (
        <Button size="sm" onClick={() => void start()} data-testid="channel-publish-start">
          {t('channel.publishStart')}
        </Button>
      ) : (
        <Button
          size="sm"
          variant="outline-danger"
          disabled={state === 'starting'}
          onClick={() => void stop()}
          data-testid="channel-publish-stop"
          data-state={state}
        >
          {t(state === 'live' ? 'channel.publishStop' : 'channel.publishStarting')}
        </Button>
      )}
    </LivePanel>
  );
}

/**
 * Plays the channel's HLS with hls.js (loaded only here), or natively where the browser can.
 * Unencrypted channels serve Low-Latency HLS (parts, blocking reloads), which hls.js follows in
 * its low-latency mode; encrypted ones plain HLS. Both say which, and how far behind the live
 * edge hls.js plays.
 */
function Player({ url }: { url: string | null }) {
  const { t } = useTranslation();
  const video = useRef<HTMLVideoElement>(null);
  const [failed, setFailed] = useState(false);
  const [lowLatency, setLowLatency] = useState<boolean | undefined>();
  const [latency, setLatency] = useState<number | undefined>();
  useEffect(() => {
    const element = video.current;
    if (!url || !element) return;
    let destroy = () => {};
    let cancelled = false;
    void import('hls.js').then(({ default: Hls }) => {
      if (cancelled) return;
      if (Hls.isSupported()) {
        const hls = new Hls(HLS_PLAYER_CONFIG);
        hls.on(Hls.Events.ERROR, (_event, data) => {
          if (data.fatal) setFailed(true);
        });
        hls.on(Hls.Events.LEVEL_LOADED, (_event, data) =>
          setLowLatency((data.details.partList?.length ?? 0) > 0),
        );
        hls.loadSource(url);
        hls.attachMedia(element);
        // hls.js's estimate of the live edge minus the playhead, refreshed as it plays.
        const sampler = setInterval(() => {
          if (Number.isFinite(hls.latency) && hls.latency > 0) setLatency(hls.latency);
        }, 1000);
        destroy = () => {
          clearInterval(sampler);
          hls.destroy();
        };
      } else {
        element.src = url;
      }
      void element.play().catch(() => undefined);
    });
    return () => {
      cancelled = true;
      destroy();
    };
  }, [url]);
  return (
    <LivePanel title={t('channel.playerTitle')}>
      {url ? (
        <>
          <PlayerVideo ref={video} testId="channel-player" />
          {lowLatency !== undefined && (
            <div className="d-flex flex-wrap align-items-center gap-2 small mt-2">
              <Badge
                bg={lowLatency ? 'success' : 'secondary'}
                data-testid="channel-player-mode"
                data-low-latency={lowLatency}
              >
                {t(lowLatency ? 'channel.playerLowLatency' : 'channel.playerPlainHls')}
              </Badge>
              {latency !== undefined && (
                <span data-testid="channel-player-latency" data-latency={latency.toFixed(3)}>
                  {t('channel.playerLatency', { seconds: latency.toFixed(1) })}
                </span>
              )}
            </div>
          )}
          {failed && (
            <Alert variant="warning" className="small mt-2">
              {t('channel.playerFailed')}
            </Alert>
          )}
        </>
      ) : (
        <Alert variant="secondary" className="small" data-testid="channel-player-waiting">
          {t('channel.playerWaiting')}
        </Alert>
      )}
    </LivePanel>
  );
}

/**
 * The open channel: where to publish to it, whether it is on air, and publishing to it from this
 * browser beside its HLS and WebRTC output.
 */
export function ChannelLive({ channel }: { channel: ChannelView }) {
  const { t } = useTranslation();
  const { whipUrl } = channel.liveParams;
  return (
    <section className="mt-4" data-testid="channel-live">
      <h2 className="h5">{t('channel.liveTitle', { id: channel.id })}</h2>
      <PublishInfo channel={channel} />
      <Row className="g-4">
        <Col lg={4}>{whipUrl && <Publisher channelId={channel.id} whipUrl={whipUrl} />}</Col>
        <Col lg={4}>
          <Player url={channel.hlsUrl} />
        </Col>
        <Col lg={4}>
          {whipUrl && <WebRtcPlayer url={whepUrlOf(whipUrl, channel.id)} onAir={channel.onAir} />}
        </Col>
      </Row>
    </section>
  );
}
