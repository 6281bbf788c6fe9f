import Card from 'react-bootstrap/Card';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { paths } from '@/app/paths.ts';
import { PageHeader } from '@/components/page-header.tsx';
import { ActivityTable } from './activity-table.tsx';

const ACTIVITY_LIMIT = 100;

export function AccountActivityPage() {
  const { t } = useTranslation();
  return (
    <>
      <PageHeader
        title={t('title.userActivity')}
        lead={t('activity.pageLead', { count: ACTIVITY_LIMIT })}
        actions={
          <Link to={paths.userUpdate()} className="btn btn-outline-secondary" data-testid="activity-back">
            {t('activity.back')}
          </Link>
        }
      />
      <Card className="shadow-sm border-0">
        <Card.Body className="p-0 p-md-2">
          <ActivityTable limit={ACTIVITY_LIMIT} />
        </Card.Body>
      </Card>
    </>
  );
}
