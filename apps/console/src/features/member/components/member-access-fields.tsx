import type { ReactNode } from 'react';
import type { Control, FieldPathByValue, FieldValues } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import type { Organization } from '@ukiyo/contract';
import { PermissionField } from '@/components/permission-checkboxes.tsx';
import { RestrictionField } from './restriction-field.tsx';

/**
 * What a member may do and where: the permission checkboxes and, where it may be chosen, which
 * organizations of the account the member reaches. The new and the edit form share them.
 */
export function MemberAccessFields<T extends FieldValues>({
  control,
  names,
  grantable,
  permissionNote,
  organizations,
}: {
  control: Control<T>;
  names: {
    permission: FieldPathByValue<T, number>;
    restricted: FieldPathByValue<T, boolean>;
    organizationIDs: FieldPathByValue<T, number[] | undefined>;
  };
  grantable: number;
  /** Above the checkboxes, e.g. why one's own permission cannot grow. */
  permissionNote?: ReactNode;
  /** The account's organizations; without them the reach is not offered. */
  organizations: readonly Organization[] | null;
}) {
  const { t } = useTranslation();
  return (
    <>
      <fieldset className="mb-3">
        <legend className="form-label fs-6">{t('member.permission')}</legend>
        {permissionNote}
        <PermissionField
          control={control}
          name={names.permission}
          grantable={grantable}
          testId="member-permission"
        />
      </fieldset>
      {organizations && <RestrictionField control={control} names={names} organizations={organizations} />}
    </>
  );
}
