import Col from 'react-bootstrap/Col';
import Row from 'react-bootstrap/Row';
import { useTranslation } from 'react-i18next';
import { paths } from '@/app/paths.ts';
import { PageHeader } from '@/components/page-header.tsx';
import { LinkButton } from '@/components/link-button.tsx';
import { useSession } from '@/lib/session.ts';
import { ActivityTable } from './activity-table.tsx';
import { PasswordSection } from './password-section.tsx';
import { ProfileSection } from './profile-section.tsx';
import { SectionCard } from './section-card.tsx';
import { TwoStepSection } from './two-step-section.tsx';

/** How many recent events the settings page shows; the activity page shows more. */
const RECENT_ACTIVITY = 10;

export function UserUpdatePage() {
  const { t } = useTranslation();
  const { user } = useSession();
  if (!user) return null;
  return (
    <>
      <PageHeader title={t('title.userUpdate')} lead={user.emailAddress} />
      <Row className="g-4">
        <Col lg={6}>
          {/* Keyed by address: after a change the form starts again from the saved values. */}
          <ProfileSection key={user.emailAddress} user={user} />
        </Col>
        <Col lg={6}>
          <PasswordSection user={user} />
        </Col>
        <Col xs={12}>
          <TwoStepSection user={user} />
        </Col>
        <Col xs={12}>
          <SectionCard
            id="activity"
            title={t('title.userActivity')}
            lead={t('activity.lead')}
            actions={
              <LinkButton
                to={paths.userActivity()}
                variant="outline-secondary"
                size="sm"
                testId="activity-more"
              >
                {t('activity.more')}
              </LinkButton>
            }
          >
            <ActivityTable limit={RECENT_ACTIVITY} />
          </SectionCard>
        </Col>
      </Row>
    </>
  );
}
